#include "profile_writer.h"

#include "op_stats.h"
#include "profile_schema.h"

#include <fmt/format.h>

namespace phantora::profile
{

ProfileWriter::ProfileWriter(const std::filesystem::path& file) : m_db(file, false)
{
    m_db.Exec(SchemaSql());
    bool allowsCudnn = false;
    {
        SqliteStatement q(m_db,
                          "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'ops'");
        allowsCudnn = q.Step() && q.Text(0).find("'cudnn'") != std::string::npos;
    }
    if (!allowsCudnn)
    {
        // SQLite cannot change a CHECK constraint in place: a new table, the rows, the
        // name (samples refer to "ops" by name, so they follow).
        m_db.Exec("BEGIN IMMEDIATE");
        m_db.Exec("CREATE TABLE ops_with_cudnn" + std::string(kOpsColumnsSql));
        m_db.Exec("INSERT INTO ops_with_cudnn SELECT * FROM ops");
        m_db.Exec("DROP TABLE ops");
        m_db.Exec("ALTER TABLE ops_with_cudnn RENAME TO ops");
        m_db.Exec("COMMIT");
    }
    // Columns added since version 1 files were first written.
    auto hasColumn = [this](const char* table, const std::string& column)
    {
        SqliteStatement cols(m_db, fmt::format("SELECT name FROM pragma_table_info('{}')", table));
        while (cols.Step())
        {
            if (cols.Text(0) == column)
            {
                return true;
            }
        }
        return false;
    };
    if (!hasColumn("samples", "args"))
    {
        m_db.Exec("ALTER TABLE samples ADD COLUMN args TEXT NOT NULL DEFAULT ''");
    }
    if (!hasColumn("runs", "host_speed_ns"))
    {
        m_db.Exec("ALTER TABLE runs ADD COLUMN host_speed_ns REAL");
    }
    if (!hasColumn("runs", "host_time_forgotten"))
    {
        m_db.Exec("ALTER TABLE runs ADD COLUMN host_time_forgotten TEXT");
    }
    m_db.Exec("BEGIN IMMEDIATE");
    m_open = true;
    SetMetadata("schema_version", std::to_string(kSchemaVersion));
}

ProfileWriter::~ProfileWriter()
{
    if (m_open)
    {
        // Not committed: an exception is on its way; leave the file as it was.
        sqlite3_exec(m_db.Get(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

void ProfileWriter::SetMetadata(const std::string& key, const std::string& value)
{
    if (key == "gpu_name" || key == "gpu_model")
    {
        SqliteStatement q(m_db, "SELECT value FROM metadata WHERE key = ?1");
        q.Bind(1, key);
        if (q.Step() && q.Text(0) != value)
        {
            throw ProfileError(
                fmt::format("profile {}: holds measurements of {} \"{}\", refusing ones of \"{}\"",
                            m_db.File().string(), key, q.Text(0), value));
        }
    }
    SqliteStatement s(m_db, "INSERT INTO metadata(key, value) VALUES(?1, ?2)"
                            " ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    s.Bind(1, key);
    s.Bind(2, value);
    s.Step();
}

void ProfileWriter::AddSamples(const OpKey& key, const std::vector<int64_t>& durationsNs,
                               const std::string& run, const std::string& source,
                               const std::vector<std::string>& args)
{
    if (durationsNs.empty())
    {
        return;
    }
    auto bindKey = [&key](SqliteStatement& s)
    {
        s.Bind(1, std::string(OpKindName(key.kind)));
        s.Bind(2, key.name);
        for (int i = 0; i < 3; ++i)
        {
            s.Bind(3 + i, static_cast<int64_t>(key.grid[i]));
            s.Bind(6 + i, static_cast<int64_t>(key.block[i]));
        }
        s.Bind(9, static_cast<int64_t>(key.sharedMem));
        s.Bind(10, static_cast<int64_t>(key.bytes));
    };
    const std::string keyWhere =
        "kind=?1 AND name=?2 AND grid_x=?3 AND grid_y=?4 AND grid_z=?5 AND "
        "block_x=?6 AND block_y=?7 AND block_z=?8 AND shared_mem=?9 AND "
        "bytes=?10";
    int64_t id = -1;
    std::string storedSource;
    {
        SqliteStatement find(m_db, "SELECT id, source FROM ops WHERE " + keyWhere);
        bindKey(find);
        if (find.Step())
        {
            id = find.Int(0);
            storedSource = find.Text(1);
        }
    }
    if (id < 0)
    {
        SqliteStatement ins(m_db,
                            "INSERT INTO ops(kind, name, grid_x, grid_y, grid_z, block_x,"
                            " block_y, block_z, shared_mem, bytes, samples, median_ns, p10_ns,"
                            " p90_ns, mean_ns, stddev_ns, source)"
                            " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,1,0,0,0,0,0,?11)");
        bindKey(ins);
        ins.Bind(11, source);
        ins.Step();
        id = sqlite3_last_insert_rowid(m_db.Get());
        storedSource = source;
    }
    SqliteStatement add(
        m_db, "INSERT INTO samples(op_id, duration_ns, run, args) VALUES(?1, ?2, ?3, ?4)");
    for (size_t i = 0; i < durationsNs.size(); ++i)
    {
        add.Reset();
        add.Bind(1, id);
        add.Bind(2, durationsNs[i]);
        add.Bind(3, run);
        add.Bind(4, i < args.size() ? args[i] : std::string());
        add.Step();
    }
    const std::string merged = storedSource == source ? source : storedSource + "+" + source;
    WriteStats(id, SamplesOf(id),
               merged.find("record") != std::string::npos &&
                       merged.find("replay") != std::string::npos
                   ? std::string("record+replay")
                   : merged);
}

std::vector<int64_t> ProfileWriter::SamplesOf(int64_t opId)
{
    std::vector<int64_t> all;
    SqliteStatement q(m_db, "SELECT duration_ns FROM samples WHERE op_id = ?1");
    q.Bind(1, opId);
    while (q.Step())
    {
        all.push_back(q.Int(0));
    }
    return all;
}

void ProfileWriter::WriteStats(int64_t opId, std::vector<int64_t> samples,
                               const std::string& source)
{
    const OpStats st = OpStats::FromSamples(std::move(samples), source);
    SqliteStatement up(m_db, "UPDATE ops SET samples=?1, median_ns=?2, p10_ns=?3, p90_ns=?4,"
                             " mean_ns=?5, stddev_ns=?6, source=?7 WHERE id=?8");
    up.Bind(1, st.samples);
    up.Bind(2, st.medianNs);
    up.Bind(3, st.p10Ns);
    up.Bind(4, st.p90Ns);
    up.Bind(5, st.meanNs);
    up.Bind(6, st.stddevNs);
    up.Bind(7, st.source);
    up.Bind(8, opId);
    up.Step();
}

void ProfileWriter::AddRun(const std::string& run, const std::string& program,
                           const std::string& command)
{
    SqliteStatement s(m_db, "INSERT INTO runs(run, program, command) VALUES(?1, ?2, ?3)"
                            " ON CONFLICT(run) DO UPDATE SET program = excluded.program,"
                            " command = excluded.command");
    s.Bind(1, run);
    s.Bind(2, program);
    s.Bind(3, command);
    s.Step();
}

void ProfileWriter::SetRunHostSpeed(const std::string& run, double nsPerRound)
{
    SqliteStatement s(m_db, "UPDATE runs SET host_speed_ns = ?2 WHERE run = ?1");
    s.Bind(1, run);
    s.Bind(2, nsPerRound);
    s.Step();
}

void ProfileWriter::SetHostGaps(const std::string& run,
                                const std::map<std::string, host_time::Sequence>& threads)
{
    {
        SqliteStatement del(m_db, "DELETE FROM host_gaps WHERE run = ?1");
        del.Bind(1, run);
        del.Step();
    }
    SqliteStatement label(m_db, "INSERT INTO host_labels(text) VALUES(?1)"
                                " ON CONFLICT(text) DO UPDATE SET text = excluded.text"
                                " RETURNING id");
    SqliteStatement gap(m_db, "INSERT INTO host_gaps(run, thread, seq, label, gap_ns, call_ns)"
                              " VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    std::map<std::string, int64_t> ids;
    for (const auto& [thread, seq] : threads)
    {
        for (std::size_t i = 0; i < seq.labels.size(); ++i)
        {
            auto [it, fresh] = ids.try_emplace(seq.labels[i], 0);
            if (fresh)
            {
                label.Reset();
                label.Bind(1, seq.labels[i]);
                label.Step();
                it->second = label.Int(0);
            }
            gap.Reset();
            gap.Bind(1, run);
            gap.Bind(2, thread);
            gap.Bind(3, static_cast<int64_t>(i));
            gap.Bind(4, it->second);
            gap.Bind(5, seq.gapBeforeNs[i]);
            gap.Bind(6, i < seq.callNs.size() ? seq.callNs[i] : int64_t{-1});
            gap.Step();
        }
    }
    // The bytes small device-to-host copies read (readback_table.h), as hex.
    {
        SqliteStatement del(m_db, "DELETE FROM host_readbacks WHERE run = ?1");
        del.Bind(1, run);
        del.Step();
    }
    SqliteStatement read(m_db, "INSERT INTO host_readbacks(run, thread, seq, bytes)"
                               " VALUES(?1, ?2, ?3, ?4)");
    for (const auto& [thread, seq] : threads)
    {
        for (const auto& [at, bytes] : seq.reads)
        {
            std::string hex;
            for (unsigned char c : bytes)
            {
                hex += fmt::format("{:02x}", c);
            }
            read.Reset();
            read.Bind(1, run);
            read.Bind(2, thread);
            read.Bind(3, static_cast<int64_t>(at));
            read.Bind(4, hex);
            read.Step();
        }
    }
}

std::map<std::string, std::pair<int64_t, int64_t>> ProfileWriter::RunsWithHostTime()
{
    std::map<std::string, std::pair<int64_t, int64_t>> runs;
    {
        SqliteStatement q(m_db, "SELECT run, count(*) FROM host_gaps GROUP BY run");
        while (q.Step())
        {
            runs[q.Text(0)].first = q.Int(1);
        }
    }
    SqliteStatement q(m_db, "SELECT run, count(*) FROM host_readbacks GROUP BY run");
    while (q.Step())
    {
        runs[q.Text(0)].second = q.Int(1);
    }
    return runs;
}

std::optional<ProfileWriter::RunRow> ProfileWriter::FindRun(const std::string& run)
{
    SqliteStatement q(m_db, "SELECT program, host_time_forgotten FROM runs WHERE run = ?1");
    q.Bind(1, run);
    if (!q.Step())
    {
        return std::nullopt;
    }
    return RunRow{q.Text(0), q.IsNull(1) ? std::string() : q.Text(1)};
}

std::pair<int64_t, int64_t> ProfileWriter::ForgetHostTime(const std::string& run)
{
    std::pair<int64_t, int64_t> removed;
    {
        SqliteStatement del(m_db, "DELETE FROM host_gaps WHERE run = ?1");
        del.Bind(1, run);
        del.Step();
        removed.first = sqlite3_changes(m_db.Get());
    }
    {
        SqliteStatement del(m_db, "DELETE FROM host_readbacks WHERE run = ?1");
        del.Bind(1, run);
        del.Step();
        removed.second = sqlite3_changes(m_db.Get());
    }
    // The host speed was measured around the host-time pass just removed: left in place it
    // would still set the scale of the program's remaining recordings (the median of all).
    SqliteStatement mark(m_db, "UPDATE runs SET host_speed_ns = NULL,"
                               " host_time_forgotten = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
                               " WHERE run = ?1");
    mark.Bind(1, run);
    mark.Step();
    return removed;
}

int64_t ProfileWriter::DropUnusedHostLabels()
{
    m_db.Exec("DELETE FROM host_labels WHERE id NOT IN (SELECT DISTINCT label FROM host_gaps)");
    return sqlite3_changes(m_db.Get());
}

std::map<std::string, std::vector<std::string>> ProfileWriter::RunsByProgram()
{
    std::map<std::string, std::vector<std::string>> out;
    SqliteStatement q(m_db, "SELECT program, run FROM runs ORDER BY program, run");
    while (q.Step())
    {
        out[q.Text(0)].push_back(q.Text(1));
    }
    return out;
}

ProfileWriter::RemovedRun ProfileWriter::RemoveRun(const std::string& run)
{
    RemovedRun removed;
    {
        SqliteStatement q(m_db, "SELECT DISTINCT op_id FROM samples WHERE run = ?1");
        q.Bind(1, run);
        while (q.Step())
        {
            removed.ops.insert(q.Int(0));
        }
    }
    const auto deleteFrom = [this, &run](const char* table)
    {
        SqliteStatement del(m_db, fmt::format("DELETE FROM {} WHERE run = ?1", table));
        del.Bind(1, run);
        del.Step();
        return static_cast<int64_t>(sqlite3_changes(m_db.Get()));
    };
    removed.samples = deleteFrom("samples");
    removed.gaps = deleteFrom("host_gaps");
    removed.readbacks = deleteFrom("host_readbacks");
    deleteFrom("runs");
    return removed;
}

ProfileWriter::Restated ProfileWriter::RestatOp(int64_t opId)
{
    Restated r;
    std::string source;
    {
        SqliteStatement q(m_db, "SELECT median_ns, source FROM ops WHERE id = ?1");
        q.Bind(1, opId);
        if (!q.Step())
        {
            throw ProfileError(
                fmt::format("profile {}: no op with id {}", m_db.File().string(), opId));
        }
        r.medianBeforeNs = q.Real(0);
        source = q.Text(1);
    }
    std::vector<int64_t> samples = SamplesOf(opId);
    if (samples.empty())
    {
        SqliteStatement del(m_db, "DELETE FROM ops WHERE id = ?1");
        del.Bind(1, opId);
        del.Step();
        return r;
    }
    WriteStats(opId, std::move(samples), source);
    SqliteStatement q(m_db, "SELECT median_ns FROM ops WHERE id = ?1");
    q.Bind(1, opId);
    q.Step();
    r.kept = true;
    r.medianAfterNs = q.Real(0);
    return r;
}

int64_t ProfileWriter::OpCount()
{
    SqliteStatement q(m_db, "SELECT count(*) FROM ops");
    q.Step();
    return q.Int(0);
}

void ProfileWriter::Commit()
{
    m_db.Exec("COMMIT");
    m_open = false;
    m_db.Exec("BEGIN IMMEDIATE");
    m_open = true;
}

} // namespace phantora::profile
