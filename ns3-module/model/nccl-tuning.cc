#include "nccl-tuning.h"

#include "nccl-selection.h"

#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NcclTuning");

const char* NcclCollectiveName(NcclCollectiveKind kind)
{
    switch (kind)
    {
    case NcclCollectiveKind::AllReduce:
        return "all_reduce";
    case NcclCollectiveKind::AllGather:
        return "all_gather";
    case NcclCollectiveKind::ReduceScatter:
        return "reduce_scatter";
    case NcclCollectiveKind::Broadcast:
        return "broadcast";
    case NcclCollectiveKind::Reduce:
        return "reduce";
    case NcclCollectiveKind::AllToAll:
        return "all_to_all";
    case NcclCollectiveKind::SendRecv:
        return "send_recv";
    }
    return "?";
}

const char* NcclAlgorithmName(NcclAlgorithm algo)
{
    return algo == NcclAlgorithm::Ring ? "ring" : "tree";
}

const char* NcclProtocolName(NcclProtocol proto)
{
    return proto == NcclProtocol::LL ? "ll" : (proto == NcclProtocol::LL128 ? "ll128" : "simple");
}

uint64_t NcclWireBytes(NcclProtocol proto, uint64_t dataBytes)
{
    switch (proto)
    {
    case NcclProtocol::LL:
        return 2 * dataBytes; // 8 bytes of flag per 8 bytes of data
    case NcclProtocol::LL128:
        return (dataBytes * 128 + 119) / 120; // 120 data bytes per 128-byte line
    case NcclProtocol::Simple:
        return dataBytes;
    }
    return dataBytes;
}

uint32_t NcclChannelsFor(const NcclConfig& config, uint64_t bytes)
{
    const uint64_t perChannel = std::max<uint64_t>(config.minBytesPerChannel, 1);
    const uint64_t wanted = std::max<uint64_t>(1, bytes / perChannel);
    const uint32_t hi = std::max(config.maxChannels, config.minChannels);
    return static_cast<uint32_t>(
        std::clamp<uint64_t>(wanted, std::max<uint32_t>(config.minChannels, 1), hi));
}

namespace
{

/// Bytes each rank moves, relative to the collective's size (nccl-tests' busbw factor).
double BusFactor(NcclCollectiveKind kind, uint32_t n)
{
    const double nd = n;
    switch (kind)
    {
    case NcclCollectiveKind::AllReduce:
        return 2.0 * (nd - 1) / nd;
    case NcclCollectiveKind::AllGather:
    case NcclCollectiveKind::ReduceScatter:
    case NcclCollectiveKind::AllToAll:
        return (nd - 1) / nd;
    case NcclCollectiveKind::Broadcast:
    case NcclCollectiveKind::Reduce:
    case NcclCollectiveKind::SendRecv:
        return 1.0;
    }
    return 1.0;
}

/// Pipeline steps a ring needs before the last piece lands.
uint32_t RingSteps(NcclCollectiveKind kind, uint32_t n)
{
    switch (kind)
    {
    case NcclCollectiveKind::AllReduce:
        return 2 * (n - 1);
    case NcclCollectiveKind::AllGather:
    case NcclCollectiveKind::ReduceScatter:
    case NcclCollectiveKind::Broadcast:
    case NcclCollectiveKind::Reduce:
        return n - 1;
    case NcclCollectiveKind::AllToAll:
    case NcclCollectiveKind::SendRecv:
        return 1;
    }
    return 1;
}

uint32_t TreeDepth(const NcclCommShape& shape)
{
    const uint32_t perNode = std::max<uint32_t>(shape.ranksPerNode, 1);
    const uint32_t nodes = (shape.nRanks + perNode - 1) / perNode;
    return (perNode - 1) + static_cast<uint32_t>(std::ceil(std::log2(std::max(nodes, 1U))));
}

bool TreeApplies(NcclCollectiveKind kind, const NcclCommShape& shape)
{
    // NCCL only has a tree all-reduce, and a tree inside one NVLink node is a ring.
    return kind == NcclCollectiveKind::AllReduce && shape.ranksPerNode < shape.nRanks;
}

} // namespace

double NcclEstimateNs(NcclCollectiveKind kind, const NcclCommShape& shape, uint64_t bytes,
                      NcclAlgorithm algo, NcclProtocol proto, uint32_t nChannels,
                      const NcclConfig& config)
{
    const NcclProtocolParams& p = config.Params(proto);
    const uint32_t n = std::max<uint32_t>(shape.nRanks, 1);
    double latency = p.baseLatencyNs;
    if (algo == NcclAlgorithm::Tree && TreeApplies(kind, shape))
    {
        // up the tree and down again, one step per level
        latency += 2.0 * TreeDepth(shape) * (p.stepLatencyNs + config.treeLevelLatencyNs);
    }
    else
    {
        latency += RingSteps(kind, n) * p.stepLatencyNs;
    }
    const double bw = p.channelBytesPerSecond * nChannels;
    const double busBytes = static_cast<double>(bytes) * BusFactor(kind, n);
    return latency + (bw > 0 ? busBytes / bw * 1e9 : 0.0);
}

NcclChoice ChooseNccl(NcclCollectiveKind kind, const NcclCommShape& shape, uint64_t bytes,
                      const NcclConfig& config)
{
    const std::vector<NcclAlgorithm> algos = NcclAllowedAlgorithms(config.algorithm, kind);
    const std::vector<NcclProtocol> protos = NcclAllowedProtocols(config.protocol, kind);
    // Only a tree left for a collective that has none: NCCL runs it as a ring.
    const bool forcedTree = algos.size() == 1 && algos.front() == NcclAlgorithm::Tree;
    const uint32_t nChannels = NcclChannelsFor(config, bytes);
    NcclChoice best;
    best.estimatedNs = std::numeric_limits<double>::infinity();
    for (NcclAlgorithm a : algos)
    {
        // A tree is offered only where NCCL has one, unless it is all the spec allows:
        // then it runs as a ring there, as NCCL does.
        if (a == NcclAlgorithm::Tree && !TreeApplies(kind, shape) && !forcedTree)
        {
            continue;
        }
        for (NcclProtocol p : protos)
        {
            const double t = NcclEstimateNs(kind, shape, bytes, a, p, nChannels, config);
            if (t < best.estimatedNs)
            {
                best = NcclChoice{a, p, nChannels, t};
            }
        }
    }
    NS_LOG_LOGIC(NcclCollectiveName(kind)
                 << " " << bytes << " B on " << shape.nRanks
                 << " ranks: " << NcclAlgorithmName(best.algorithm) << "/"
                 << NcclProtocolName(best.protocol) << " x" << best.nChannels);
    return best;
}

} // namespace ns3
