// A strict reader of one TOML table: every key it does not know is an error, and every
// error names the file and line that wrote the value (the file a scenario extends, when
// the value came from there), the key's dotted path and what was expected.  A misspelt
// key must never pass as a default: the user would study the wrong cluster.  The scenario
// reader (scenario_loader.cc) is written on it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

namespace phantora
{

/// A value of a TOML file that cannot be used; what() names the file, the line when
/// known, the key and what was expected.
class TomlError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

/// One table of the file, with the context needed to say where a problem is.
class TomlSection
{
public:
    TomlSection(const std::filesystem::path& file, std::string name, const toml::table* table)
        : m_file(file), m_name(std::move(name)), m_table(table)
    {
    }

    bool Present() const { return m_table != nullptr; }

    /// Rejects keys this section does not know: a typo must not pass as a default.
    void AllowOnly(std::initializer_list<std::string_view> keys) const;

    TomlSection Sub(std::string_view key) const;

    const toml::table* Table() const { return m_table; }

    /// The line of the table's header (0 when unknown or absent).
    int64_t Line() const { return m_table ? m_table->source().begin.line : 0; }

    const toml::node* Node(std::string_view key) const { return Find(key); }

    /// The \p name'd table inside this one (an element of an array of tables).
    TomlSection Element(std::string_view name, const toml::table* table) const;

    std::optional<std::string> String(std::string_view key, bool required) const;

    std::optional<bool> Boolean(std::string_view key, bool required) const;

    std::optional<int64_t> Integer(std::string_view key, bool required, int64_t min,
                                   int64_t max = std::numeric_limits<int64_t>::max()) const;

    /// One of \p choices, spelt exactly.
    std::optional<std::string> Choice(std::string_view key, bool required,
                                      std::initializer_list<std::string_view> choices) const;

    /// An array of strings (names), each non-empty and different from the others.
    std::vector<std::string> Names(std::string_view key) const;

    std::optional<double> Number(std::string_view key, bool required, double min) const;

    /// A bandwidth such as "400Gbps" or "26.5GB/s", strictly positive.
    std::optional<double> BitRate(std::string_view key, bool required) const;

    /// A duration such as "1us" or "250ns", zero or more.
    std::optional<double> DurationNs(std::string_view key, bool required) const;

    /// A link latency such as "1us": strictly positive, as every real link takes time.
    std::optional<double> LatencyNs(std::string_view key, bool required) const;

    std::optional<uint64_t> Bytes(std::string_view key, bool required) const;

    [[noreturn]] void Fail(const toml::node& n, const std::string& key,
                           const std::string& what) const;

    [[noreturn]] void FailMissing(std::string_view key, std::string_view what) const;

    /// "file:line" of \p n: the file that wrote it, which is not this scenario's own
    /// file when the key came from a file it extends.
    std::string Where(const toml::node& n) const;

    /// The file that wrote \p n (see Where).
    std::filesystem::path FileOf(const toml::node& n) const;

private:
    template <class T, class Parser>
    std::optional<T> Quantity(std::string_view key, bool required, std::string_view what,
                              Parser parse, bool positive) const;

    const toml::node* Find(std::string_view key) const;

    const toml::node* Lookup(std::string_view key, bool required, std::string_view what) const;

    std::string Qualified(std::string_view key) const;

    const std::filesystem::path& m_file;
    std::string m_name;
    const toml::table* m_table;
};

} // namespace phantora
