#include "profile_reader.h"

#include "profile_schema.h"
#include "program_name.h"

#include <charconv>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace phantora::profile
{

namespace
{
/// \p hex as bytes (two digits a byte); nullopt if it is not that.
std::optional<std::string> HexBytes(const std::string& hex)
{
    if (hex.size() % 2 != 0)
    {
        return std::nullopt;
    }
    std::string bytes;
    for (std::size_t i = 0; i < hex.size(); i += 2)
    {
        unsigned v = 0;
        const auto [p, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
        if (ec != std::errc{} || p != hex.data() + i + 2)
        {
            return std::nullopt;
        }
        bytes.push_back(static_cast<char>(v));
    }
    return bytes;
}
} // namespace

ProfileReader::ProfileReader(const std::filesystem::path& file)
    : ProfileReader(std::vector<std::filesystem::path>{file})
{
}

ProfileReader::ProfileReader(const std::vector<std::filesystem::path>& files)
{
    if (files.empty())
    {
        throw ProfileError("no profile database given");
    }
    m_file = files.front();
    for (const auto& f : files)
    {
        Load(f);
    }
    for (const auto& entry : m_ops)
    {
        m_byName.emplace(std::make_pair(entry.first.kind, entry.first.name), &entry);
    }
}

void ProfileReader::Load(const std::filesystem::path& file)
{
    SqliteDb db(file, true);
    for (const char* table : {"metadata", "ops"})
    {
        if (!db.HasTable(table))
        {
            throw ProfileError(
                fmt::format("profile {}: has no {} table: not a profile", file.string(), table));
        }
    }
    std::map<std::string, std::string> metadata;
    {
        SqliteStatement meta(db, "SELECT key, value FROM metadata");
        while (meta.Step())
        {
            metadata[meta.Text(0)] = meta.Text(1);
        }
    }
    auto version = metadata.find("schema_version");
    if (version == metadata.end() || version->second != std::to_string(kSchemaVersion))
    {
        throw ProfileError(fmt::format(
            "profile {}: metadata.schema_version is {}, expected {}", file.string(),
            version == metadata.end() ? "missing" : "\"" + version->second + "\"", kSchemaVersion));
    }
    if (!m_files.empty() && metadata["gpu_model"] != GpuModel())
    {
        throw ProfileError(fmt::format(
            "profile {} was measured on \"{}\" but {} on \"{}\": profiles searched together "
            "must come from one GPU model",
            file.string(), metadata["gpu_model"], m_files.front().string(), GpuModel()));
    }
    m_files.push_back(file);
    m_metadata.insert(metadata.begin(), metadata.end()); // the first file's keys win
    std::unordered_map<int64_t, OpStats*> byId;
    SqliteStatement ops(db, "SELECT kind, name, grid_x, grid_y, grid_z, block_x, block_y, block_z,"
                            " shared_mem, bytes, samples, median_ns, p10_ns, p90_ns, mean_ns,"
                            " stddev_ns, source, id FROM ops");
    while (ops.Step())
    {
        OpKey k;
        auto kind = ParseOpKind(ops.Text(0));
        if (!kind)
        {
            throw ProfileError(fmt::format("profile {}: ops row {} has kind \"{}\", expected "
                                           "kernel, gemm, memcpy, memset or cudnn",
                                           file.string(), ops.Int(17), ops.Text(0)));
        }
        k.kind = *kind;
        k.name = ops.Text(1);
        // a launch's grid, block and shared memory are 32-bit unsigned, bytes not negative
        for (int column = 2; column <= 9; ++column)
        {
            const int64_t v = ops.Int(column);
            if (v < 0 || (column < 9 && v > std::numeric_limits<uint32_t>::max()))
            {
                throw ProfileError(fmt::format("profile {}: ops row {} has {} {}, expected 0 to {}",
                                               file.string(), ops.Int(17), ops.Name(column), v,
                                               column < 9 ? std::numeric_limits<uint32_t>::max()
                                                          : std::numeric_limits<uint64_t>::max()));
            }
        }
        for (int i = 0; i < 3; ++i)
        {
            k.grid[i] = static_cast<uint32_t>(ops.Int(2 + i));
            k.block[i] = static_cast<uint32_t>(ops.Int(5 + i));
        }
        k.sharedMem = static_cast<uint32_t>(ops.Int(8));
        k.bytes = static_cast<uint64_t>(ops.Int(9));
        OpStats s;
        s.samples = ops.Int(10);
        s.medianNs = ops.Real(11);
        s.p10Ns = ops.Real(12);
        s.p90Ns = ops.Real(13);
        s.meanNs = ops.Real(14);
        s.stddevNs = ops.Real(15);
        s.source = ops.Text(16);
        if (s.samples <= 0 || !(s.medianNs >= 0))
        {
            throw ProfileError(fmt::format(
                "profile {}: ops row {} ({}) has {} samples and median {} ns, expected at least "
                "one sample and a median >= 0",
                file.string(), ops.Int(17), k.Describe(), s.samples, s.medianNs));
        }
        const int64_t id = ops.Int(17);
        auto placed = m_ops.emplace(std::move(k), std::move(s));
        if (placed.second) // an op an earlier file measured keeps that file's samples only
        {
            byId[id] = &placed.first->second;
        }
    }
    ReadProgramMedians(db, byId);
    ReadArgsMedians(db, byId);
}

std::vector<host_time::Sequence>
ProfileReader::HostSequences(const std::vector<std::string>& runs) const
{
    std::vector<host_time::Sequence> out;
    for (const auto& file : m_files)
    {
        std::vector<std::string> here;
        for (const auto& run : runs)
        {
            auto it = m_runFile.find(run);
            if (it != m_runFile.end() && it->second == file)
            {
                here.push_back(run);
            }
        }
        if (!here.empty())
        {
            auto part = HostSequencesIn(file, here);
            out.insert(out.end(), std::make_move_iterator(part.begin()),
                       std::make_move_iterator(part.end()));
        }
    }
    return out;
}

std::vector<host_time::Sequence>
ProfileReader::HostSequencesIn(const std::filesystem::path& file,
                               const std::vector<std::string>& runs)
{
    SqliteDb db(file, true);
    if (!db.HasTable("host_gaps") || !db.HasTable("host_labels"))
    {
        return {}; // written before host time was recorded
    }
    std::vector<host_time::Sequence> out;
    SqliteStatement q(db, "SELECT g.thread, l.text, g.gap_ns, g.call_ns FROM host_gaps g"
                          " JOIN host_labels l ON l.id = g.label WHERE g.run = ?1"
                          " ORDER BY g.thread, g.seq");
    for (const std::string& run : runs)
    {
        q.Reset();
        q.Bind(1, run);
        std::string thread;
        while (q.Step())
        {
            if (out.empty() || q.Text(0) != thread)
            {
                thread = q.Text(0);
                out.emplace_back();
            }
            out.back().labels.push_back(q.Text(1));
            out.back().gapBeforeNs.push_back(q.Int(2));
            out.back().callNs.push_back(q.Int(3));
        }
    }
    if (!db.HasTable("host_readbacks"))
    {
        return out; // written before read-backs were recorded
    }
    // Each run's threads are in out in (run, thread) order; the reads join them by name.
    SqliteStatement reads(db, "SELECT thread, seq, bytes FROM host_readbacks WHERE run = ?1");
    std::size_t n = 0; // as the loop above numbered them
    std::string thread;
    for (const std::string& run : runs)
    {
        q.Reset();
        q.Bind(1, run);
        std::map<std::string, std::size_t> index;
        while (q.Step())
        {
            if (n == 0 || q.Text(0) != thread)
            {
                thread = q.Text(0);
                ++n;
            }
            index[thread] = n - 1;
        }
        reads.Reset();
        reads.Bind(1, run);
        while (reads.Step())
        {
            auto it = index.find(reads.Text(0));
            if (it == index.end())
            {
                continue;
            }
            auto bytes = HexBytes(reads.Text(2));
            if (!bytes || reads.Int(1) < 0)
            {
                throw ProfileError(fmt::format(
                    "profile {}: host_readbacks of run {} thread {} call {} holds \"{}\", expected "
                    "a call number from 0 and hex bytes",
                    file.string(), run, reads.Text(0), reads.Int(1), reads.Text(2).substr(0, 64)));
            }
            out[it->second].reads[static_cast<std::size_t>(reads.Int(1))] = std::move(*bytes);
        }
    }
    return out;
}

void ProfileReader::ReadProgramMedians(SqliteDb& db,
                                       const std::unordered_map<int64_t, OpStats*>& byId)
{
    if (!db.HasTable("runs") || !db.HasTable("samples"))
    {
        return; // written before programs were named: every op has its pooled median only
    }
    {
        bool hasSpeed = false, hasForgotten = false;
        SqliteStatement cols(db, "SELECT name FROM pragma_table_info('runs')");
        while (cols.Step())
        {
            hasSpeed = hasSpeed || cols.Text(0) == "host_speed_ns";
            hasForgotten = hasForgotten || cols.Text(0) == "host_time_forgotten";
        }
        SqliteStatement runs(db, fmt::format("SELECT run, program, command, {}, {} FROM runs",
                                             hasSpeed ? "host_speed_ns" : "NULL",
                                             hasForgotten ? "host_time_forgotten" : "NULL"));
        while (runs.Step())
        {
            if (m_runs.count(runs.Text(0)))
            {
                continue; // an earlier file has a run of this name
            }
            m_runFile[runs.Text(0)] = m_files.back();
            m_runPrograms[runs.Text(0)] = runs.Text(1);
            Run& r = m_runs[runs.Text(0)];
            r.program = runs.Text(1);
            r.command = runs.Text(2);
            r.ranks = LaunchedRanks(r.command);
            if (!runs.IsNull(3))
            {
                r.hostSpeedNs = runs.Real(3);
            }
            if (!runs.IsNull(4))
            {
                r.hostTimeForgotten = runs.Text(4);
            }
        }
    }
    if (db.HasTable("host_gaps"))
    {
        SqliteStatement gaps(db, "SELECT DISTINCT run FROM host_gaps");
        while (gaps.Step())
        {
            if (auto it = m_runs.find(gaps.Text(0));
                it != m_runs.end() && m_runFile[it->first] == m_files.back())
            {
                it->second.hostGaps = true;
            }
        }
    }
    std::map<std::pair<int64_t, std::string>, std::vector<int64_t>> samples;
    SqliteStatement q(db, "SELECT s.op_id, r.program, s.duration_ns FROM samples s"
                          " JOIN runs r ON r.run = s.run");
    while (q.Step())
    {
        samples[{q.Int(0), q.Text(1)}].push_back(q.Int(2));
    }
    for (auto& [opProgram, durations] : samples)
    {
        auto op = byId.find(opProgram.first);
        if (op != byId.end() && !opProgram.second.empty())
        {
            const OpStats own = OpStats::FromSamples(std::move(durations), "");
            op->second->medianByProgramNs[opProgram.second] = own.medianNs;
            op->second->p10ByProgramNs[opProgram.second] = own.p10Ns;
        }
    }
}

void ProfileReader::ReadArgsMedians(SqliteDb& db, const std::unordered_map<int64_t, OpStats*>& byId)
{
    if (!db.HasTable("samples"))
    {
        return;
    }
    {
        SqliteStatement has(db, "SELECT 1 FROM pragma_table_info('samples') WHERE name = 'args'");
        if (!has.Step())
        {
            return; // written before launch arguments were recorded
        }
    }
    std::map<std::pair<int64_t, std::string>, std::vector<int64_t>> samples;
    SqliteStatement q(db, "SELECT op_id, args, duration_ns FROM samples WHERE args <> ''");
    while (q.Step())
    {
        samples[{q.Int(0), q.Text(1)}].push_back(q.Int(2));
    }
    for (auto& [opArgs, durations] : samples)
    {
        auto op = byId.find(opArgs.first);
        if (op != byId.end())
        {
            op->second->medianByArgsNs[opArgs.second] =
                OpStats::FromSamples(std::move(durations), "").medianNs;
        }
    }
}

std::string ProfileReader::GpuModel() const
{
    auto it = m_metadata.find("gpu_model");
    return it == m_metadata.end() ? "" : it->second;
}

const OpStats* ProfileReader::Find(const OpKey& key) const
{
    auto it = m_ops.find(key);
    return it == m_ops.end() ? nullptr : &it->second;
}

std::vector<const std::pair<const OpKey, OpStats>*>
ProfileReader::SameName(OpKind kind, const std::string& name) const
{
    std::vector<const std::pair<const OpKey, OpStats>*> out;
    auto [first, last] = m_byName.equal_range({kind, name});
    for (auto it = first; it != last; ++it)
    {
        out.push_back(it->second);
    }
    return out;
}

} // namespace phantora::profile
