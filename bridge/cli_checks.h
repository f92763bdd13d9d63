// Command-line checks shared by phantora-cluster and phantora-rank.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

namespace phantora
{

/// A number greater than 0.  CLI::PositiveNumber's message names the whole range of a
/// double ("not in range 0.000000 to 1797693...") instead of what was expected.
inline CLI::Validator PositiveNumber()
{
    return CLI::Validator(
        [](std::string& value) -> std::string
        {
            double number = 0;
            if (!CLI::detail::lexical_cast(value, number) || !std::isfinite(number) || number <= 0)
            {
                return "expected a number greater than 0, got \"" + value + "\"";
            }
            return {};
        },
        "NUMBER > 0");
}

} // namespace phantora
