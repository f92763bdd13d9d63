// One collective alone on an idle network, as nccl-tests measures it: what
// phantora-nccl-tests prints and what the calibration test compares with data.
#pragma once

#include "nccl/config.h"
#include "scenario.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace phantora
{

/// "all_reduce", "all_gather", ... (nccl-tests' and the calibration CSV's names).
std::optional<nccl::CollectiveKind> ParseCollectiveKind(std::string_view name);

/// nccl-tests' bus bandwidth factor: busbw = algbw * factor.
double BusBandwidthFactor(nccl::CollectiveKind kind, uint32_t nRanks);

struct BenchResult
{
    double timeUs{0};      ///< mean over the iterations
    std::string algorithm; ///< as NCCL's tuning picked it
    std::string protocol;
    uint32_t nChannels{0};
    std::size_t transfers{0};
};

/// Runs \p kind over \p bytes on GPUs 0 .. nRanks-1 of \p scenario's network,
/// \p iters times back to back, each alone.
BenchResult BenchCollective(const Scenario& scenario, nccl::CollectiveKind kind, uint32_t nRanks,
                            uint64_t bytes, uint32_t iters = 1);

} // namespace phantora
