#include "raw_log.h"

#include "sqlite_handle.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <vector>
#include <zstd.h>

namespace phantora::profile
{

namespace
{
std::vector<std::string_view> SplitTabs(std::string_view line)
{
    std::vector<std::string_view> out;
    while (true)
    {
        const auto tab = line.find('\t');
        out.push_back(line.substr(0, tab));
        if (tab == std::string_view::npos)
        {
            return out;
        }
        line = line.substr(tab + 1);
    }
}
} // namespace

namespace
{
/// \p v is an unsigned integer of at most \p max, and nothing else.
bool ParseUnsigned(std::string_view v, uint64_t max, uint64_t& out)
{
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    return ec == std::errc{} && p == v.data() + v.size() && out <= max;
}

/// What the importer and JoinRawParts read of a metadata value must parse, or the log is
/// refused naming the line, instead of an exception from deep in the importer.
std::string BadMetadata(std::string_view key, std::string_view value)
{
    uint64_t n = 0;
    if ((key == "dropped_records" || key == "processes") &&
        !ParseUnsigned(value, std::numeric_limits<int64_t>::max(), n))
    {
        return fmt::format("meta {} is \"{}\", expected a non-negative integer", key, value);
    }
    if (key == "host_speed_ns")
    {
        double speed = 0;
        const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), speed);
        if (ec != std::errc{} || p != value.data() + value.size() || !std::isfinite(speed) ||
            speed <= 0)
        {
            return fmt::format("meta host_speed_ns is \"{}\", expected a positive number of "
                               "nanoseconds",
                               value);
        }
    }
    return {};
}

/// The log's text; a ".zst" log (committed raw logs are compressed) is decompressed, up to
/// kMaxRawLogBytes: a few hundred bytes of zstd can claim gigabytes.
std::string ReadText(const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
    {
        throw ProfileError(fmt::format("raw log {}: cannot open", file.string()));
    }
    std::error_code ec;
    if (const auto size = std::filesystem::file_size(file, ec); !ec && size > kMaxRawLogBytes)
    {
        throw ProfileError(fmt::format("raw log {}: {} bytes, more than the {} a raw log may hold",
                                       file.string(), size, kMaxRawLogBytes));
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (file.extension() != ".zst")
    {
        return bytes;
    }
    std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> z(ZSTD_createDStream(),
                                                                 &ZSTD_freeDStream);
    std::string text;
    std::vector<char> chunk(ZSTD_DStreamOutSize());
    ZSTD_inBuffer src{bytes.data(), bytes.size(), 0};
    size_t left = 1;
    while (src.pos < src.size)
    {
        ZSTD_outBuffer dst{chunk.data(), chunk.size(), 0};
        left = ZSTD_decompressStream(z.get(), &dst, &src);
        if (ZSTD_isError(left))
        {
            throw ProfileError(fmt::format("raw log {}: not valid zstd data: {}", file.string(),
                                           ZSTD_getErrorName(left)));
        }
        if (text.size() + dst.pos > kMaxRawLogBytes)
        {
            throw ProfileError(fmt::format("raw log {}: decompresses to more than the {} bytes "
                                           "a raw log may hold",
                                           file.string(), kMaxRawLogBytes));
        }
        text.append(chunk.data(), dst.pos);
    }
    if (left != 0)
    {
        throw ProfileError(fmt::format("raw log {}: the zstd data is truncated", file.string()));
    }
    return text;
}
} // namespace

RawLog RawLog::Read(const std::filesystem::path& file)
{
    std::istringstream in(ReadText(file));
    RawLog log;
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line))
    {
        ++lineNo;
        if (line.empty())
        {
            continue;
        }
        auto fail = [&](const std::string& what)
        { throw ProfileError(fmt::format("raw log {}:{}: {}", file.string(), lineNo, what)); };
        const auto f = SplitTabs(line);
        if (f[0] == "meta")
        {
            if (f.size() != 3)
            {
                fail("expected \"meta<TAB>key<TAB>value\"");
            }
            if (const std::string bad = BadMetadata(f[1], f[2]); !bad.empty())
            {
                fail(bad);
            }
            log.metadata[std::string(f[1])] = std::string(f[2]);
            continue;
        }
        if (f[0] == "gap")
        {
            auto number = [](std::string_view v, int64_t& out)
            {
                auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
                return ec == std::errc{} && p == v.data() + v.size() && out >= -1;
            };
            int64_t gap = 0, call = -1;
            if ((f.size() != 4 && f.size() != 5) || !number(f[2], gap) || f[3].empty() ||
                (f.size() == 5 && !number(f[4], call)))
            {
                fail("expected \"gap<TAB>thread<TAB>nanoseconds (-1 or more)<TAB>label"
                     "[<TAB>call nanoseconds (-1 or more)]\"");
            }
            host_time::Sequence& t = log.hostThreads[std::string(f[1])];
            t.labels.emplace_back(f[3]);
            t.gapBeforeNs.push_back(gap);
            t.callNs.push_back(call);
            continue;
        }
        if (f[0] == "readback")
        {
            std::size_t seq = 0;
            const std::string_view hex = f.size() == 4 ? f[3] : std::string_view{};
            const auto [p, ec] = f.size() == 4
                                     ? std::from_chars(f[2].data(), f[2].data() + f[2].size(), seq)
                                     : std::from_chars_result{nullptr, std::errc::invalid_argument};
            std::string bytes;
            bool ok = ec == std::errc{} && p == f[2].data() + f[2].size() && !hex.empty() &&
                      hex.size() % 2 == 0;
            for (std::size_t i = 0; ok && i < hex.size(); i += 2)
            {
                unsigned v = 0;
                const auto [q, e] = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
                ok = e == std::errc{} && q == hex.data() + i + 2;
                bytes.push_back(static_cast<char>(v));
            }
            if (!ok)
            {
                fail("expected \"readback<TAB>thread<TAB>call number<TAB>hex bytes\"");
            }
            log.hostThreads[std::string(f[1])].reads[seq] = std::move(bytes);
            continue;
        }
        if (f[0] != "op" || (f.size() != 12 && f.size() != 13))
        {
            fail("expected \"meta\" with 3 fields, \"op\" with 12 or 13, \"gap\" with 4 or 5"
                 " or \"readback\" with 4");
        }
        OpKey k;
        auto kind = ParseOpKind(f[1]);
        if (!kind)
        {
            fail(fmt::format("kind \"{}\": expected kernel, gemm, memcpy, memset or cudnn", f[1]));
        }
        k.kind = *kind;
        k.name = std::string(f[2]);
        // grid, block and shared memory are 32-bit in a launch; bytes and the duration 64
        uint64_t v[9];
        for (int i = 0; i < 9; ++i)
        {
            const uint64_t max = i < 7   ? std::numeric_limits<uint32_t>::max()
                                 : i < 8 ? std::numeric_limits<uint64_t>::max()
                                         : std::numeric_limits<int64_t>::max();
            if (!ParseUnsigned(f[3 + i], max, v[i]))
            {
                fail(fmt::format("field {} is \"{}\", expected an integer from 0 to {}", 4 + i,
                                 f[3 + i], max));
            }
        }
        for (int i = 0; i < 3; ++i)
        {
            k.grid[i] = static_cast<uint32_t>(v[i]);
            k.block[i] = static_cast<uint32_t>(v[3 + i]);
        }
        k.sharedMem = static_cast<uint32_t>(v[6]);
        k.bytes = v[7];
        log.sampleArgs[k].emplace_back(f.size() == 13 ? f[12] : std::string_view());
        log.samples[std::move(k)].push_back(static_cast<int64_t>(v[8]));
    }
    return log;
}

std::vector<std::filesystem::path> RawParts(const std::filesystem::path& raw)
{
    namespace fs = std::filesystem;
    const fs::path dir = raw.has_parent_path() ? raw.parent_path() : fs::path(".");
    const std::string prefix = raw.filename().string() + ".";
    std::vector<std::pair<long, fs::path>> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
    {
        const std::string name = e.path().filename().string();
        if (name.size() <= prefix.size() + 5 || name.compare(0, prefix.size(), prefix) != 0 ||
            name.compare(name.size() - 5, 5, ".part") != 0)
        {
            continue;
        }
        const std::string pid = name.substr(prefix.size(), name.size() - prefix.size() - 5);
        long value = 0;
        auto [p, err] = std::from_chars(pid.data(), pid.data() + pid.size(), value);
        if (err == std::errc{} && p == pid.data() + pid.size())
        {
            found.emplace_back(value, e.path());
        }
    }
    std::sort(found.begin(), found.end());
    std::vector<fs::path> out;
    for (auto& f : found)
    {
        out.push_back(std::move(f.second));
    }
    return out;
}

void JoinRawParts(const std::vector<std::filesystem::path>& parts, const std::filesystem::path& raw)
{
    std::map<std::string, std::string> meta;
    std::vector<std::string> metaOrder;
    unsigned long long dropped = 0;
    std::vector<std::string> ops;
    for (const auto& part : parts)
    {
        RawLog::Read(part); // refuses a malformed part, naming it and the line
        std::ifstream in(part);
        for (std::string line; std::getline(in, line);)
        {
            if (line.rfind("meta\t", 0) != 0)
            {
                if (!line.empty())
                {
                    ops.push_back(line);
                }
                continue;
            }
            const auto f = SplitTabs(line);
            const std::string key(f[1]);
            if (key == "dropped_records")
            {
                uint64_t n = 0;
                ParseUnsigned(f[2], std::numeric_limits<int64_t>::max(), n); // Read checked it
                dropped += n;
            }
            else if (meta.emplace(key, std::string(f[2])).second)
            {
                metaOrder.push_back(key);
            }
        }
    }
    std::ofstream out(raw, std::ios::trunc);
    if (!out)
    {
        throw ProfileError(fmt::format("raw log {}: cannot write", raw.string()));
    }
    for (const auto& key : metaOrder)
    {
        out << "meta\t" << key << '\t' << meta[key] << '\n';
    }
    out << "meta\tdropped_records\t" << dropped << '\n';
    out << "meta\tprocesses\t" << parts.size() << '\n';
    for (const auto& line : ops)
    {
        out << line << '\n';
    }
}

std::size_t AppendHostPass(std::istream& in, std::ostream& out)
{
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
    {
        if (line.rfind("gap\t", 0) == 0 || line.rfind("readback\t", 0) == 0)
        {
            out << line << '\n';
            ++n;
        }
    }
    return n;
}

} // namespace phantora::profile
