#include "toml_section.h"

#include "units.h"

#include <algorithm>
#include <fmt/format.h>

namespace phantora
{

template <class T, class Parser>
std::optional<T> TomlSection::Quantity(std::string_view key, bool required, std::string_view what,
                                       Parser parse, bool positive) const
{
    const toml::node* n = Lookup(key, required, what);
    if (!n)
    {
        return std::nullopt;
    }
    std::optional<T> v;
    if (n->is_string())
    {
        v = parse(n->as_string()->get());
    }
    if (!v || (positive ? !(*v > 0) : !(*v >= 0)))
    {
        Fail(*n, std::string(key),
             fmt::format("expected {}{}",
                         positive ? "a positive value: " : "a non-negative value: ", what));
    }
    return v;
}

void TomlSection::AllowOnly(std::initializer_list<std::string_view> keys) const
{
    if (!m_table)
    {
        return;
    }
    for (const auto& [k, node] : *m_table)
    {
        bool known = false;
        for (auto allowed : keys)
        {
            known = known || k.str() == allowed;
        }
        if (!known)
        {
            std::string list;
            for (auto allowed : keys)
            {
                list += list.empty() ? "" : ", ";
                list += allowed;
            }
            Fail(node, std::string(k.str()), fmt::format("unknown key; expected one of: {}", list));
        }
    }
}

TomlSection TomlSection::Sub(std::string_view key) const
{
    const toml::node* n = Find(key);
    if (n && !n->is_table())
    {
        Fail(*n, std::string(key), "expected a table");
    }
    return TomlSection(m_file, Qualified(key), n ? n->as_table() : nullptr);
}

TomlSection TomlSection::Element(std::string_view name, const toml::table* table) const
{
    return TomlSection(m_file, Qualified(name), table);
}

std::optional<std::string> TomlSection::String(std::string_view key, bool required) const
{
    const toml::node* n = Lookup(key, required, "a string");
    if (!n)
    {
        return std::nullopt;
    }
    if (!n->is_string())
    {
        Fail(*n, std::string(key), "expected a string");
    }
    return n->as_string()->get();
}

std::optional<bool> TomlSection::Boolean(std::string_view key, bool required) const
{
    const toml::node* n = Lookup(key, required, "true or false");
    if (!n)
    {
        return std::nullopt;
    }
    if (!n->is_boolean())
    {
        Fail(*n, std::string(key), "expected true or false");
    }
    return n->as_boolean()->get();
}

std::optional<int64_t> TomlSection::Integer(std::string_view key, bool required, int64_t min,
                                            int64_t max) const
{
    const toml::node* n = Lookup(key, required, "an integer");
    if (!n)
    {
        return std::nullopt;
    }
    if (!n->is_integer())
    {
        Fail(*n, std::string(key), "expected an integer");
    }
    const int64_t v = n->as_integer()->get();
    if (v < min || v > max)
    {
        Fail(*n, std::string(key),
             max == std::numeric_limits<int64_t>::max()
                 ? fmt::format("expected an integer >= {}, got {}", min, v)
                 : fmt::format("expected an integer >= {} and <= {}, got {}", min, max, v));
    }
    return v;
}

std::optional<std::string>
TomlSection::Choice(std::string_view key, bool required,
                    std::initializer_list<std::string_view> choices) const
{
    std::string list;
    for (auto c : choices)
    {
        list += list.empty() ? "" : " or ";
        list += fmt::format("\"{}\"", c);
    }
    const auto v = String(key, required);
    if (v && std::find(choices.begin(), choices.end(), *v) == choices.end())
    {
        Fail(*Find(key), std::string(key), fmt::format("expected {}, got \"{}\"", list, *v));
    }
    return v;
}

std::vector<std::string> TomlSection::Names(std::string_view key) const
{
    std::vector<std::string> names;
    const toml::node* n = Find(key);
    if (!n)
    {
        return names;
    }
    if (!n->is_array())
    {
        Fail(*n, std::string(key), "expected an array of names such as [\"leaf0\", \"leaf1\"]");
    }
    for (const toml::node& e : *n->as_array())
    {
        if (!e.is_string() || e.as_string()->get().empty())
        {
            Fail(e, std::string(key), "expected an array of non-empty strings");
        }
        names.push_back(e.as_string()->get());
    }
    return names;
}

std::optional<double> TomlSection::Number(std::string_view key, bool required, double min) const
{
    const toml::node* n = Lookup(key, required, "a number");
    if (!n)
    {
        return std::nullopt;
    }
    if (!n->is_number())
    {
        Fail(*n, std::string(key), "expected a number");
    }
    const double v = n->value<double>().value();
    if (!(v >= min))
    {
        Fail(*n, std::string(key), fmt::format("expected a number >= {}, got {}", min, v));
    }
    return v;
}

std::optional<double> TomlSection::BitRate(std::string_view key, bool required) const
{
    return Quantity<double>(key, required, "a bandwidth such as \"400Gbps\" or \"50GB/s\"",
                            ParseBitRate, true);
}

std::optional<double> TomlSection::DurationNs(std::string_view key, bool required) const
{
    return Quantity<double>(key, required, "a duration such as \"1.5us\" or \"250ns\"",
                            ParseDurationNs, false);
}

std::optional<double> TomlSection::LatencyNs(std::string_view key, bool required) const
{
    return Quantity<double>(key, required, "a duration such as \"1.5us\" or \"250ns\"",
                            ParseDurationNs, true);
}

std::optional<uint64_t> TomlSection::Bytes(std::string_view key, bool required) const
{
    const toml::node* n = Lookup(key, required, "a size");
    if (!n)
    {
        return std::nullopt;
    }
    if (n->is_integer() && n->as_integer()->get() > 0)
    {
        return static_cast<uint64_t>(n->as_integer()->get());
    }
    if (n->is_string())
    {
        if (auto v = ParseBytes(n->as_string()->get()); v && *v > 0)
        {
            return v;
        }
    }
    Fail(*n, std::string(key), "expected a positive size such as \"141GiB\" or 4096");
}

void TomlSection::Fail(const toml::node& n, const std::string& key, const std::string& what) const
{
    const std::string where = Where(n);
    throw TomlError(fmt::format("{}: '{}': {}", where, Qualified(key), what));
}

void TomlSection::FailMissing(std::string_view key, std::string_view what) const
{
    throw TomlError(fmt::format("{}: missing '{}' ({})", m_file.string(), Qualified(key), what));
}

std::string TomlSection::Where(const toml::node& n) const
{
    const auto& src = n.source();
    const std::string file = src.path ? *src.path : m_file.string();
    return src.begin.line ? fmt::format("{}:{}", file, src.begin.line) : file;
}

std::filesystem::path TomlSection::FileOf(const toml::node& n) const
{
    const auto& src = n.source();
    return src.path ? std::filesystem::path(*src.path) : m_file;
}

const toml::node* TomlSection::Find(std::string_view key) const
{
    return m_table ? m_table->get(key) : nullptr;
}

const toml::node* TomlSection::Lookup(std::string_view key, bool required,
                                      std::string_view what) const
{
    const toml::node* n = Find(key);
    if (!n && required)
    {
        FailMissing(key, what);
    }
    return n;
}

std::string TomlSection::Qualified(std::string_view key) const
{
    return m_name.empty() ? std::string(key) : m_name + "." + std::string(key);
}

} // namespace phantora
