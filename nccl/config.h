// The NCCL model's vocabulary (algorithms, protocols) and every tunable it has.
#pragma once

#include "collective_kind.h"

#include <cstdint>
#include <string>

namespace phantora::nccl
{

enum class Algorithm
{
    Ring,
    Tree,
    Nvls,     ///< NVLink SHARP: the NVSwitch reduces and multicasts (one node)
    NvlsTree, ///< NVLS inside each node, a tree between the nodes (all-reduce, several nodes)
};

enum class Protocol
{
    LL,
    LL128,
    Simple,
};

const char* AlgorithmName(Algorithm algo);
const char* ProtocolName(Protocol proto);

/**
 * \brief Costs of one NCCL protocol, as NCCL's own tuning model has them.
 *
 * Plain numbers, so that the bridge's scenario can hold a config without touching any
 * simulator's time resolution.
 */
struct ProtocolParams
{
    double baseLatencyNs{0};         ///< once per collective: kernel launch and teardown
    double stepLatencyNs{0};         ///< per pipeline step: flag write, poll, SM hand-off
    double channelBytesPerSecond{0}; ///< data one channel's SMs can move; 0: no cap
    /// Data of one pipeline slice per channel with this protocol (NCCL: the protocol's
    /// buffer over NCCL_STEPS, e.g. LL's 512 KiB of lines / 8 steps / 2 for the flags);
    /// 0: Config::chunkBytes.
    uint64_t chunkBytes{0};
};

/**
 * \brief Every tunable of the NCCL model.  Filled from the scenario's [nccl] table;
 * the defaults are NCCL's own orders of magnitude, not a fit to any measurement.
 */
struct Config
{
    std::string algorithm{};  ///< NCCL_ALGO spec (selection.h): "" automatic
    std::string protocol{};   ///< NCCL_PROTO: "" (automatic), "ll", "ll128" or "simple"
    uint32_t minChannels{1};  ///< NCCL_MIN_NCHANNELS
    uint32_t maxChannels{16}; ///< NCCL_MAX_NCHANNELS: channels the communicator has
    /// NCCL gives a channel at least this much data before using another one (of the
    /// size ChannelBasisBytes() weighs): LL's thread threshold, 8 bytes for each of 512
    /// threads, as the 4-GPU node's NCCL logs bear out.
    uint64_t minBytesPerChannel{4 * 1024};
    uint64_t chunkBytes{512 * 1024}; ///< data of one pipeline slice per channel (Simple)
    /// Upper bound of pipeline chunks per channel: more cost simulation time, not accuracy.
    uint32_t maxChunksPerChannel{64};
    ProtocolParams ll{6600, 600, 8e9};
    ProtocolParams ll128{14000, 1900, 18e9};
    ProtocolParams simple{8400, 3400, 24e9};
    /// Ring all-reduce / all-gather / reduce-scatter: the ring's last step only receives
    /// (NCCL's final recv into the user buffer, reduce-scatter's recvReduceCopy), on the
    /// same thread block as the channel's sends, before it starts its next chunk: the data
    /// one channel copies out per second that way.  0: the receive costs nothing.
    double recvCopyBytesPerSecond{0};
    /// Tree only: extra cost per tree level crossed (network hop between nodes).
    double treeLevelLatencyNs{2000};
    /// Point-to-point operations only (send/recv, all-to-all): fixed cost on top of the
    /// protocol's base latency.  NCCL runs them through its p2p scheduler and kernel, not
    /// a collective's: on the 4 x H200 node an 8-byte send/recv costs 9.8 us where a
    /// 2-rank all-reduce of 8 bytes, with two ring steps, costs 8.0.
    double p2pLatencyNs{0};
    /// NCCL's point-to-point channels (NCCL_DEBUG=INFO: "32 p2p channels, 32 p2p channels per
    /// peer" on the 4 x H200 node) and its P2P chunk ("P2P Chunksize set to 524288").  With
    /// them a send/recv gets NCCL 2.28's channel count and protocol (P2pChannels); 0: the
    /// collective rule (ChannelsFor) and the model's estimate, as before they were known.
    uint32_t p2pChannels{0};
    uint32_t p2pChannelsPerPeer{0};
    uint64_t p2pChunkBytes{512 * 1024};
    /// NCCL_P2P_LL_THRESHOLD: a send/recv takes LL while it carries at most this much a channel.
    uint64_t p2pLLThresholdBytes{16384};
    /// Bytes one p2p channel's thread block copies per second with Simple (NCCL's p2p kernel,
    /// not a ring's); 0: simple.channelBytesPerSecond.
    double p2pChannelBytesPerSecond{0};
    /// NVLink SHARP (NCCL's NVLS algorithm): the node's NVSwitch can reduce and multicast
    /// (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, H100/H200 SXM) and NCCL_NVLS_ENABLE is not 0.
    /// Off by default: only scenarios of nodes that have it turn it on.
    bool nvlsEnable{false};
    uint32_t nvlsChannels{16}; ///< NCCL's NVLS_NCHANNELS_SM90: NVLS always uses them all
    /// NVLS runs the Simple protocol only.  baseLatencyNs: NCCL's tuning has 25 us for NVLS
    /// on NVLink; channelBytesPerSecond: bytes of the buffer one NVLS channel reduces and
    /// multicasts per second (its SMs issue the switch's loads and stores); chunkBytes:
    /// NCCL_NVLS_CHUNKSIZE, the data one head reduces per step.
    ProtocolParams nvls{25000, 0, 0, 128 * 1024};
    /// NVLS-tree only: bytes of the buffer one channel moves per second (its SMs also
    /// drive the network's send and receive, fewer reduce warps than NVLS's); 0: as NVLS.
    double nvlsTreeChannelBytesPerSecond{0};
    /// NVLS-tree only: the tuning model's cost of each tree level crossed, up and down (NCCL
    /// 2.28's hwLatencies[NET][NVLSTree][Simple]: 20.9 us, against 5 / 14 us for the tree's
    /// LL / Simple): what keeps NCCL on the tree for small all-reduces across many nodes.
    double nvlsTreeLevelLatencyNs{20900};
    double NvlsTreeChannelRate() const
    {
        return nvlsTreeChannelBytesPerSecond > 0 ? nvlsTreeChannelBytesPerSecond
                                                 : nvls.channelBytesPerSecond;
    }
    /// Bytes per second one rank can send to other nodes: its share of its node's NICs
    /// (NCCL's bwInter comes from the same NIC speed).  The tuning model bounds what
    /// crosses nodes by it; 0: unknown, no bound (one node, or a scenario without NICs).
    /// Filled from the scenario's [topology] (nic_bandwidth / gpus_per_nic), not [nccl].
    double netBytesPerSecond{0};
    /// NCCL's ring graph on one node: its channels times their bandwidth (NCCL_DEBUG=GRAPH
    /// logs "nChannels 12, bw 30" on the 4 x H200 node: 360 GB/s), the bus bandwidth NCCL's
    /// tuning table starts from (src/graph/tuning.cc).  With it, the protocol of a ring on
    /// one node is chosen as NCCL 2.28 chooses it (NcclRingTableNs); 0: unknown, chosen by
    /// the model's own estimate.
    double ringGraphBytesPerSecond{0};
    /// NCCL 2.28's llMaxBws for one node (Hopper: 141 GB/s) and perChMaxRingLL128Bws
    /// (Hopper: 36.7 GB/s per graph channel); graph channels for the latter.
    double llMaxBusBytesPerSecond{141e9};
    double ll128MaxGraphChannelBytesPerSecond{36.7e9};
    uint32_t ringGraphChannels{12};

    const ProtocolParams& Params(Protocol p) const
    {
        return p == Protocol::LL ? ll : (p == Protocol::LL128 ? ll128 : simple);
    }
    /// The pipeline slice of protocol \p p.
    uint64_t ChunkBytes(Protocol p) const
    {
        const uint64_t own = Params(p).chunkBytes;
        return own > 0 ? own : chunkBytes;
    }
};

/// Wire bytes for \p dataBytes of payload: LL sends an 8-byte flag with every 8 bytes
/// of data, LL128 uses 8 of every 128 bytes for flags, Simple sends the data as is.
uint64_t WireBytes(Protocol proto, uint64_t dataBytes);

} // namespace phantora::nccl
