#ifndef NCCL_PLAN_H
#define NCCL_PLAN_H

#include "nccl-config.h"
#include "nccl-tuning.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief One NCCL collective (or grouped point-to-point set) as a DAG of transfers.
 *
 * NCCL performs a collective as a sequence of point-to-point steps between
 * neighbours (ring, tree), pipelined over chunks and spread over channels.  A plan
 * is that sequence: each transfer may start once all its dependencies have been
 * delivered, plus its own fixed delay (protocol / kernel step latency).  The plan
 * is independent of the network: NcclPlanExecutor runs it on any PhantoraTransport.
 */
struct NcclTransfer
{
    uint32_t src{0};     ///< sending rank within the communicator
    uint32_t dst{0};     ///< receiving rank within the communicator
    uint64_t bytes{0};   ///< bytes on the wire (protocol overhead included)
    uint32_t channel{0}; ///< NCCL channel, for traces
    Time delay{0};       ///< fixed latency added before the send starts
    /// Shortest time from the send's start to its delivery: the channel's SMs copy at a
    /// bounded rate whatever the link offers (0: the network alone decides).
    Time minDuration{0};
    std::vector<uint32_t> deps{}; ///< indices of transfers that must be delivered first
};

struct NcclPlan
{
    std::string algorithm{"ring"};  ///< "ring", "tree", ...
    std::string protocol{"simple"}; ///< "ll", "ll128", "simple"
    uint32_t nChannels{1};
    std::vector<NcclTransfer> transfers{};
    Time fixedLatency{0}; ///< added once after the last transfer is delivered (kernel teardown)
    uint32_t chunksPerChannel{1}; ///< pipeline chunks each channel's data was cut into
};

/**
 * The plan NCCL would run for \p kind over \p bytes on a communicator of \p shape:
 * algorithm, protocol and channels as ChooseNccl() picks them (or as the config forces),
 * each channel's share cut into pipeline chunks.  Bytes follow nccl-tests' convention
 * (see NcclCollectiveKind).
 */
NcclPlan MakeNcclPlan(NcclCollectiveKind kind, const NcclCommShape& shape, uint64_t bytes,
                      const NcclConfig& config);

/// As MakeNcclPlan(), with the algorithm, protocol and channel count given.
NcclPlan MakeNcclPlan(NcclCollectiveKind kind, const NcclCommShape& shape, uint64_t bytes,
                      const NcclConfig& config, const NcclChoice& choice);

/// Ring all-reduce of \p bytes over \p nRanks: reduce-scatter then all-gather, 2(n-1) steps,
/// each rank sending one chunk of bytes/n to its successor per step.
NcclPlan MakeRingAllReducePlan(uint32_t nRanks, uint64_t bytes);

} // namespace ns3

#endif
