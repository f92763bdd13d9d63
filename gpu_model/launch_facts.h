// A launch's facts: "key=value" joined by ',' as kernel_params.h ArgFacts writes them
// ("5=4096,6=4": the values of scalar arguments 5 and 6).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace phantora
{

/// The value under \p key ("5", an argument's ordinal), if \p facts holds one.
std::optional<uint64_t> LaunchFact(std::string_view facts, std::string_view key);
/// The value of argument \p ordinal.
std::optional<uint64_t> ArgFact(std::string_view facts, int ordinal);

} // namespace phantora
