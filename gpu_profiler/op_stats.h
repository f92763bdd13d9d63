// What the profile keeps about one op's measured durations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace phantora::profile
{

struct OpStats
{
    int64_t samples{0};
    double medianNs{0};
    double p10Ns{0};
    double p90Ns{0};
    double meanNs{0};
    double stddevNs{0};
    std::string source; ///< "record" or "replay"

    /// Order statistics of \p durationsNs (linear interpolation between ranks).
    static OpStats FromSamples(std::vector<int64_t> durationsNs, std::string source);
};

} // namespace phantora::profile
