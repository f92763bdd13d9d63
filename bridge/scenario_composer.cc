#include "scenario_composer.h"

#include "scenario.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phantora
{

namespace
{

namespace fs = std::filesystem;

/// What toml++ 3.3 would assert on (in a release build: assume, undefined behaviour), found
/// by tests/fuzz/ and fixed in toml++ 3.4: where it is and what, else an empty message.
/// Line by line, and on the safe side (a line inside a multi-line string is checked too):
/// - a non-ASCII byte on a line that is not a whole-line comment: toml++ 3.3's test for
///   non-ASCII whitespace reaches an unreachable branch for most characters from U+00A1 on
///   wherever it meets them outside a string, and telling strings apart is its own job;
/// - a line opening with '[' whose first character after the brackets cannot start a key
///   (`[`gpu]`, `[.x]`, a lone `[`), which it hands its key parser unchecked.
struct ReaderHazard
{
    std::size_t offset{0};
    std::string what;
};

ReaderHazard FindReaderHazard(const std::string& text)
{
    for (std::size_t begin = 0; begin < text.size();)
    {
        std::size_t end = text.find('\n', begin);
        end = end == std::string::npos ? text.size() : end;
        const std::size_t first = text.find_first_not_of(" \t\r", begin);
        const bool comment = first < end && text[first] == '#';
        for (std::size_t i = begin; i < end && !comment; ++i)
        {
            if (static_cast<unsigned char>(text[i]) >= 0x80)
            {
                return {i, "a non-ASCII character: the TOML reader here (toml++ 3.3) takes them "
                           "only in whole-line comments; write it in ASCII"};
            }
        }
        if (first < end && text[first] == '[')
        {
            std::size_t k = text.find_first_not_of(" \t", first + 1);
            if (k < end && text[k] == '[')
            {
                k = text.find_first_not_of(" \t", k + 1);
            }
            k = std::min(k, end);
            const auto key = k < end ? static_cast<unsigned char>(text[k]) : '\n';
            if (!(std::isalnum(key) || key == '_' || key == '-' || key == '"' || key == '\'' ||
                  key == ']'))
            {
                return {k, "a table header's key must start with a letter, a digit, '_', '-' or "
                           "a quote"};
            }
        }
        begin = end + 1;
    }
    return {std::string::npos, {}};
}

toml::table ParseOne(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
    {
        throw ScenarioError(fmt::format("{}: cannot be read", file.string()));
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // TOML allows no NUL byte anywhere; toml++ 3.3 asserts (in a release build: assumes)
    // that a table header's key does not start with one (found by tests/fuzz/), so it is
    // refused here, where it is.
    if (const auto nul = text.find('\0'); nul != std::string::npos)
    {
        const auto line = std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n') + 1;
        const auto start = text.rfind('\n', nul);
        const auto column = nul - (start == std::string::npos ? 0 : start + 1) + 1;
        throw ScenarioError(fmt::format("{}:{}:{}: a NUL byte (TOML allows none; is this a text "
                                        "file?)",
                                        file.string(), line, column));
    }
    if (const auto hazard = FindReaderHazard(text); !hazard.what.empty())
    {
        const auto at = std::min(hazard.offset, text.size());
        const auto line = std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1;
        const auto start = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
        throw ScenarioError(fmt::format("{}:{}:{}: {}", file.string(), line,
                                        at - (start == std::string::npos ? 0 : start + 1) + 1,
                                        hazard.what));
    }
    try
    {
        return toml::parse(text, file.string());
    }
    catch (const toml::parse_error& e)
    {
        const auto& src = e.source();
        throw ScenarioError(fmt::format("{}:{}:{}: {}", file.string(), src.begin.line,
                                        src.begin.column, e.description()));
    }
}

/// A [topology] that names another kind is a different network, not an edit of this one.
bool ReplacesWhole(std::string_view key, const toml::table& base, const toml::table& over)
{
    if (key != "topology")
    {
        return false;
    }
    const auto a = base["kind"].value<std::string>();
    const auto b = over["kind"].value<std::string>();
    return a && b && *a != *b;
}

/// Lays \p over onto \p base. Nodes are moved, never copied: a copy would lose the file
/// and line the node was read from (toml++ copies no source information).
void MergeInto(toml::table& base, toml::table&& over)
{
    for (auto&& [key, node] : over)
    {
        toml::node* existing = base.get(key.str());
        if (existing && existing->is_table() && node.is_table() &&
            !ReplacesWhole(key.str(), *existing->as_table(), *node.as_table()))
        {
            MergeInto(*existing->as_table(), std::move(*node.as_table()));
            continue;
        }
        std::move(node).visit([&base, &key = key](auto&& n)
                              { base.insert_or_assign(key, std::move(n)); });
    }
}

std::string Chain(const std::vector<fs::path>& chain, const fs::path& last)
{
    std::string out;
    for (const auto& f : chain)
    {
        out += f.string() + " extends ";
    }
    return out + last.string();
}

toml::table Compose(const fs::path& file, std::vector<fs::path>& chain)
{
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
    {
        throw ScenarioError(fmt::format("{}: no such scenario file", file.string()));
    }
    toml::table own = ParseOne(file);
    const toml::node* extends = own.get("extends");
    if (!extends)
    {
        return own;
    }
    auto where = [&file](const toml::node& n)
    { return fmt::format("{}:{}: 'extends'", file.string(), n.source().begin.line); };
    std::vector<std::pair<fs::path, const toml::node*>> bases;
    auto addBase = [&](const toml::node& n)
    {
        if (!n.is_string() || n.as_string()->get().empty())
        {
            throw ScenarioError(fmt::format(
                "{}: expected a scenario file such as \"h200x4-nvlink.toml\" or a list of them",
                where(n)));
        }
        const fs::path named = n.as_string()->get();
        bases.emplace_back(named.is_absolute() ? named : file.parent_path() / named, &n);
    };
    if (const toml::array* list = extends->as_array())
    {
        for (const toml::node& e : *list)
        {
            addBase(e);
        }
    }
    else
    {
        addBase(*extends);
    }
    chain.push_back(file);
    toml::table merged;
    for (const auto& [base, node] : bases)
    {
        const fs::path canonical = fs::weakly_canonical(base, ec);
        for (const fs::path& seen : chain)
        {
            if (fs::weakly_canonical(seen, ec) == canonical)
            {
                throw ScenarioError(fmt::format("{}: a cycle: {}", where(*node), Chain(chain, base)));
            }
        }
        if (!fs::is_regular_file(base, ec))
        {
            throw ScenarioError(
                fmt::format("{}: no such scenario file {}", where(*node), base.string()));
        }
        MergeInto(merged, Compose(base, chain));
    }
    chain.pop_back();
    own.erase("extends");
    MergeInto(merged, std::move(own));
    return merged;
}

} // namespace

toml::table ComposeScenarioToml(const std::filesystem::path& file)
{
    std::vector<fs::path> chain;
    return Compose(file, chain);
}

} // namespace phantora
