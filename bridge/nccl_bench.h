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

/// Runs \p kind over \p bytes on GPUs 0 .. nRanks-1 of \p scenario's network, \p iters
/// calls back to back as nccl-tests issues them on one stream: each rank starts a call
/// once its own part of the previous one ended (a broadcast's root runs ahead of the
/// chain's tail), and the time is the slowest rank's per call.  At most
/// kBenchTransferBudget transfers are simulated: beyond, as many calls as fit (two at
/// least) and each rank's steady gap between calls carried on to \p iters.
BenchResult BenchCollective(const Scenario& scenario, nccl::CollectiveKind kind, uint32_t nRanks,
                            uint64_t bytes, uint32_t iters = 1);

inline constexpr std::size_t kBenchTransferBudget = 100000;

} // namespace phantora
