// Quantities written in scenario files: "400Gbps", "26.5GB/s", "1.5us", "141GiB".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace phantora
{

/// Bits per second from "400Gbps", "400Gb/s", "50GB/s", "50GBps" (decimal prefixes k M G T;
/// binary Ki Mi Gi Ti).  nullopt when the text is not such a quantity.
std::optional<double> ParseBitRate(std::string_view text);

/// Nanoseconds (possibly fractional) from "1.5us", "250ns", "2ms", "0.1s", "10ps".
std::optional<double> ParseDurationNs(std::string_view text);

/// Bytes from "141GiB", "80GB", "4096", "4KiB".
std::optional<uint64_t> ParseBytes(std::string_view text);

} // namespace phantora
