// One NCCL collective (or grouped point-to-point set) as a DAG of transfers.
//
// NCCL performs a collective as a sequence of point-to-point steps between neighbours
// (ring, tree), pipelined over chunks and spread over channels.  A plan is that
// sequence: each transfer may start once all its dependencies have been delivered, plus
// its own fixed delay (protocol / kernel step latency).  The plan is independent of the
// network: ns3::NcclPlanExecutor (ns3-module/) runs it on any transport, as NCCL's
// src/graph decides what src/transport then moves.
#pragma once

#include "config.h"
#include "tuning.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace phantora::nccl
{

/// Plans keep integer picoseconds: the finest resolution any simulator here runs at,
/// converted to its clock only where a transfer is scheduled.
using Picoseconds = std::chrono::duration<int64_t, std::pico>;

struct Transfer
{
    uint32_t src{0};      ///< sending rank within the communicator
    uint32_t dst{0};      ///< receiving rank within the communicator
    uint64_t bytes{0};    ///< bytes on the wire (protocol overhead included)
    uint32_t channel{0};  ///< NCCL channel, for traces
    Picoseconds delay{0}; ///< fixed latency added before the send starts
    /// Shortest time from the send's start to its delivery: the channel's SMs copy at a
    /// bounded rate whatever the link offers (0: the network alone decides).
    Picoseconds minDuration{0};
    std::vector<uint32_t> deps{}; ///< indices of transfers that must be delivered first
    /// NVLS (NVLink SHARP) only: the transfer goes through the node's NVSwitch, which takes
    /// \p bytes from every rank of switchSrcs, reduces them (one source: copies) and delivers
    /// the result to every rank of switchDsts; src and dst are then the first of each.
    /// Both empty: an ordinary point-to-point transfer src -> dst.
    std::vector<uint32_t> switchSrcs{};
    std::vector<uint32_t> switchDsts{};
};

struct Plan
{
    std::string algorithm{"ring"};  ///< "ring", "tree", "nvls", "nvlstree", "p2p"
    std::string protocol{"simple"}; ///< "ll", "ll128", "simple"
    uint32_t nChannels{1};
    std::vector<Transfer> transfers{};
    /// Added once after the last transfer is delivered (kernel teardown).
    Picoseconds fixedLatency{0};
    uint32_t chunksPerChannel{1}; ///< pipeline chunks each channel's data was cut into
    /// Several calls of the collective back to back (BackToBack()): the index of each call's
    /// first transfer, ascending, the first 0; empty: one call.  A rank starts its part of
    /// call k once its own part of call k-1 ended (its last transfer delivered, then
    /// fixedLatency), as NCCL's kernels queued on one stream do; nothing waits for the
    /// other ranks' ends.
    std::vector<uint32_t> callStarts{};
};

/**
 * The plan NCCL would run for \p kind over \p bytes on a communicator of \p shape:
 * algorithm, protocol and channels as Choose() picks them (or as the config forces),
 * each channel's share cut into pipeline chunks.  Bytes follow nccl-tests' convention
 * (see CollectiveKind).  Throws std::invalid_argument for a communicator without ranks
 * (or a send/recv with fewer than two) and for specs Choose() refuses.
 */
Plan MakePlan(CollectiveKind kind, const CommShape& shape, uint64_t bytes, const Config& config);

/// As MakePlan(), with the algorithm, protocol and channel count given.
Plan MakePlan(CollectiveKind kind, const CommShape& shape, uint64_t bytes, const Config& config,
              const Choice& choice);

/// \p calls copies of \p one back to back (Plan::callStarts), as nccl-tests issues its
/// iterations on one stream.  Throws std::invalid_argument for zero calls or a plan that
/// already holds several.
Plan BackToBack(const Plan& one, uint32_t calls);

/// Ring all-reduce of \p bytes over \p nRanks: reduce-scatter then all-gather, 2(n-1) steps,
/// each rank sending one chunk of bytes/n to its successor per step.
Plan MakeRingAllReducePlan(uint32_t nRanks, uint64_t bytes);

} // namespace phantora::nccl
