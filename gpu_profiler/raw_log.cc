#include "raw_log.h"

#include "sqlite_handle.h"

#include <charconv>
#include <fmt/format.h>
#include <fstream>

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

RawLog RawLog::Read(const std::filesystem::path& file)
{
    std::ifstream in(file);
    if (!in)
    {
        throw ProfileError(fmt::format("raw log {}: cannot open", file.string()));
    }
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
            log.metadata[std::string(f[1])] = std::string(f[2]);
            continue;
        }
        if (f[0] != "op" || f.size() != 12)
        {
            fail("expected \"meta\" with 3 fields or \"op\" with 12");
        }
        OpKey k;
        auto kind = ParseOpKind(f[1]);
        if (!kind)
        {
            fail(fmt::format("kind \"{}\": expected kernel, gemm, memcpy or memset", f[1]));
        }
        k.kind = *kind;
        k.name = std::string(f[2]);
        uint64_t v[9];
        for (int i = 0; i < 9; ++i)
        {
            auto s = f[3 + i];
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v[i]);
            if (ec != std::errc{} || p != s.data() + s.size())
            {
                fail(fmt::format("field {} is \"{}\", expected a non-negative integer", 4 + i, s));
            }
        }
        for (int i = 0; i < 3; ++i)
        {
            k.grid[i] = static_cast<uint32_t>(v[i]);
            k.block[i] = static_cast<uint32_t>(v[3 + i]);
        }
        k.sharedMem = static_cast<uint32_t>(v[6]);
        k.bytes = v[7];
        log.samples[std::move(k)].push_back(static_cast<int64_t>(v[8]));
    }
    return log;
}

} // namespace phantora::profile
