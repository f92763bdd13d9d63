#include "units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

namespace phantora
{

namespace
{

struct Split
{
    double value;
    std::string_view unit;
};

std::optional<Split> SplitNumber(std::string_view text)
{
    while (!text.empty() && text.front() == ' ')
    {
        text.remove_prefix(1);
    }
    while (!text.empty() && text.back() == ' ')
    {
        text.remove_suffix(1);
    }
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || !std::isfinite(value))
    {
        return std::nullopt;
    }
    std::string_view unit = text.substr(static_cast<std::size_t>(end - text.data()));
    while (!unit.empty() && unit.front() == ' ')
    {
        unit.remove_prefix(1);
    }
    return Split{value, unit};
}

/// Splits a unit like "GiB" into its multiplier (2^30) and the rest ("B").
std::pair<double, std::string_view> Prefix(std::string_view unit)
{
    static constexpr std::array<std::pair<std::string_view, double>, 4> kBinary{{
        {"Ki", 1024.0},
        {"Mi", 1048576.0},
        {"Gi", 1073741824.0},
        {"Ti", 1099511627776.0},
    }};
    for (const auto& [p, m] : kBinary)
    {
        if (unit.substr(0, 2) == p)
        {
            return {m, unit.substr(2)};
        }
    }
    if (!unit.empty())
    {
        switch (unit.front())
        {
        case 'k':
        case 'K':
            return {1e3, unit.substr(1)};
        case 'M':
            return {1e6, unit.substr(1)};
        case 'G':
            return {1e9, unit.substr(1)};
        case 'T':
            return {1e12, unit.substr(1)};
        default:
            break;
        }
    }
    return {1.0, unit};
}

} // namespace

std::optional<double> ParseBitRate(std::string_view text)
{
    const auto s = SplitNumber(text);
    if (!s)
    {
        return std::nullopt;
    }
    const auto [mult, base] = Prefix(s->unit);
    if (base == "bps" || base == "b/s")
    {
        return s->value * mult;
    }
    if (base == "Bps" || base == "B/s")
    {
        return s->value * mult * 8.0;
    }
    return std::nullopt;
}

std::optional<double> ParseDurationNs(std::string_view text)
{
    const auto s = SplitNumber(text);
    if (!s)
    {
        return std::nullopt;
    }
    static constexpr std::array<std::pair<std::string_view, double>, 5> kUnits{{
        {"ps", 1e-3},
        {"ns", 1.0},
        {"us", 1e3},
        {"ms", 1e6},
        {"s", 1e9},
    }};
    for (const auto& [u, m] : kUnits)
    {
        if (s->unit == u)
        {
            return s->value * m;
        }
    }
    return std::nullopt;
}

std::optional<uint64_t> ParseBytes(std::string_view text)
{
    const auto s = SplitNumber(text);
    if (!s || s->value < 0)
    {
        return std::nullopt;
    }
    if (s->unit.empty())
    {
        return static_cast<uint64_t>(std::llround(s->value));
    }
    const auto [mult, base] = Prefix(s->unit);
    if (base != "B")
    {
        return std::nullopt;
    }
    return static_cast<uint64_t>(std::llround(s->value * mult));
}

} // namespace phantora
