// NCCL's choice of algorithm, protocol and channel count for one collective (NCCL's
// src/graph/tuning.cc in spirit: latency + bytes on the bus / bandwidth).
#pragma once

#include "config.h"

#include <cstdint>

namespace phantora::nccl
{

/// What NCCL would run a collective with: algorithm, protocol, channel count.
struct Choice
{
    Algorithm algorithm{Algorithm::Ring};
    Protocol protocol{Protocol::Simple};
    uint32_t nChannels{1};
    double estimatedNs{0}; ///< the tuning model's estimate, for logs and tests
};

/// The shape of a communicator the tuning model needs.
struct CommShape
{
    uint32_t nRanks{1};
    uint32_t ranksPerNode{1}; ///< ranks sharing a node (NVLink domain); nRanks when one node
};

/// Channels NCCL uses for \p bytes: as many as keep minBytesPerChannel each, within
/// [minChannels, maxChannels].
uint32_t ChannelsFor(const Config& config, uint64_t bytes);

/// The size NCCL weighs against minBytesPerChannel (LL's 512 threads x 8 bytes) when it
/// picks a ring's channel count for \p bytes on \p nRanks with \p proto: NCCL 2.28 keeps
/// a channel while the whole buffer holds threads x threadThreshold for it, LL's threshold
/// scaled by the rank count on a ring, LL128's (640 x 8) and Simple's (512 x 64) not.  Its
/// logs show it so (NCCL_DEBUG_SUBSYS=TUNING, tests/data/h200x4-nvlink/nccl_logs): a 4-rank
/// all-reduce takes a second channel at 32 KiB, a 2-rank one at 16 KiB.  A tree weighs the
/// whole buffer.
uint64_t ChannelBasisBytes(CollectiveKind kind, uint32_t nRanks, uint64_t bytes,
                           Protocol proto = Protocol::LL);

/// NCCL 2.28's channel count for one send/recv of \p bytes on a communicator of \p shape
/// (src/enqueue.cc, scheduleP2pTasksToPlan and addP2pToPlan): at most p2pChannelsPerPeer,
/// halved while that many for every rank exceed the p2p channels; then one channel per
/// P2P chunk / 8 of data (per chunk / 2 across nodes), doubled while a channel would carry
/// more than 32 chunks (one chunk across nodes).  Needs Config::p2pChannels.
uint32_t P2pChannels(const CommShape& shape, uint64_t bytes, const Config& config);

/// The kernel's fixed cost of a send/recv or all-to-all with \p proto (before
/// Config::p2pLatencyNs): the protocol's base latency; with NCCL's p2p setup known
/// (Config::p2pChannels) LL's whatever the protocol, as NCCL's one p2p kernel runs both
/// (the 4 x H200 node: 11.8 us for 16 KiB on LL, 12.2 us for 32 KiB on Simple).
double P2pBaseLatencyNs(Protocol proto, const Config& config);

/// Whether NCCL's own tuning table picks the protocol (a ring collective on one node, the
/// ring graph's bandwidth known: Config::ringGraphBytesPerSecond).
bool RingTableApplies(CollectiveKind kind, const CommShape& shape, const Config& config);

/// NCCL 2.28's tuning-table time of a ring collective on one NVLink node with \p proto:
/// what NCCL ranks protocols by, not what the collective takes.
double NcclRingTableNs(CollectiveKind kind, uint32_t nRanks, uint64_t bytes, Protocol proto,
                       const Config& config);

/// Whether NCCL would offer NVLS for \p kind on \p shape: NVLS on in \p config, one node,
/// all-reduce / all-gather / reduce-scatter (across nodes NCCL's NVLS needs CollNet).
bool NvlsApplies(CollectiveKind kind, const CommShape& shape, const Config& config);

/// Whether NCCL would offer NVLS-tree for \p kind on \p shape: NVLS on in \p config,
/// all-reduce, several nodes of at least two ranks each (NCCL disables NVLSTree on one node).
bool NvlsTreeApplies(CollectiveKind kind, const CommShape& shape, const Config& config);

/// Levels of the tree NCCL builds over \p nNodes nodes: ceil(log2(nNodes)).
uint32_t NodeTreeDepth(uint32_t nNodes);

/// The tuning model's time for one algorithm/protocol: latency plus the slower of the
/// NVLink side (channels' copy rates) and, across nodes where config.netBytesPerSecond is
/// known, the node's NICs.
double EstimateNs(CollectiveKind kind, const CommShape& shape, uint64_t bytes, Algorithm algo,
                  Protocol proto, uint32_t nChannels, const Config& config);

/// NCCL's choice: the fastest estimate among the algorithms and protocols the config
/// (NCCL_ALGO, NCCL_PROTO) allows.  Throws std::invalid_argument on an unknown name, and
/// when nothing allowed applies (NCCL_ALGO=NVLS where NVLS is off), as NCCL refuses it.
Choice Choose(CollectiveKind kind, const CommShape& shape, uint64_t bytes, const Config& config);

} // namespace phantora::nccl
