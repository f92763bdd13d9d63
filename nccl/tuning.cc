#include "tuning.h"

#include "selection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace phantora::nccl
{

uint32_t ChannelsFor(const Config& config, uint64_t bytes)
{
    const uint64_t perChannel = std::max<uint64_t>(config.minBytesPerChannel, 1);
    const uint64_t wanted = std::max<uint64_t>(1, bytes / perChannel);
    const uint32_t hi = std::max(config.maxChannels, config.minChannels);
    return static_cast<uint32_t>(
        std::clamp<uint64_t>(wanted, std::max<uint32_t>(config.minChannels, 1), hi));
}

uint64_t ChannelBasisBytes(CollectiveKind kind, uint32_t nRanks, uint64_t bytes)
{
    switch (kind)
    {
    case CollectiveKind::AllReduce:
    case CollectiveKind::Reduce:
    case CollectiveKind::Broadcast:
        return bytes / std::max<uint32_t>(nRanks, 1);
    default:
        return bytes;
    }
}

namespace
{

/// Bytes each rank moves, relative to the collective's size (nccl-tests' busbw factor).
double BusFactor(CollectiveKind kind, uint32_t n)
{
    const double nd = n;
    switch (kind)
    {
    case CollectiveKind::AllReduce:
        return 2.0 * (nd - 1) / nd;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
        return (nd - 1) / nd;
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce:
    case CollectiveKind::SendRecv:
        return 1.0;
    }
    return 1.0;
}

/// Pipeline steps a ring needs before the last piece lands.
uint32_t RingSteps(CollectiveKind kind, uint32_t n)
{
    switch (kind)
    {
    case CollectiveKind::AllReduce:
        return 2 * (n - 1);
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce:
        return n - 1;
    case CollectiveKind::AllToAll:
    case CollectiveKind::SendRecv:
        return 1;
    }
    return 1;
}

uint32_t TreeDepth(const CommShape& shape)
{
    const uint32_t perNode = std::max<uint32_t>(shape.ranksPerNode, 1);
    const uint32_t nodes = (shape.nRanks + perNode - 1) / perNode;
    return (perNode - 1) + static_cast<uint32_t>(std::ceil(std::log2(std::max(nodes, 1U))));
}

bool TreeApplies(CollectiveKind kind, const CommShape& shape)
{
    // NCCL only has a tree all-reduce, and a tree inside one NVLink node is a ring.
    return kind == CollectiveKind::AllReduce && shape.ranksPerNode < shape.nRanks;
}

} // namespace

bool NvlsApplies(CollectiveKind kind, const CommShape& shape, const Config& config)
{
    // NCCL 2.28: NVLS needs multicast support (nvlsSupport), at least two NVLS channels and
    // two ranks, and runs all-reduce, all-gather and reduce-scatter.  Across nodes plain
    // NVLS needs CollNet (SHARP on the network), which no scenario declares, and NVLS-tree is
    // not modelled: a communicator spanning nodes never gets NVLS.
    const bool collective = kind == CollectiveKind::AllReduce ||
                            kind == CollectiveKind::AllGather ||
                            kind == CollectiveKind::ReduceScatter;
    return config.nvlsEnable && collective && config.nvlsChannels >= 2 && shape.nRanks >= 2 &&
           shape.ranksPerNode >= shape.nRanks;
}

double EstimateNs(CollectiveKind kind, const CommShape& shape, uint64_t bytes, Algorithm algo,
                  Protocol proto, uint32_t nChannels, const Config& config)
{
    const uint32_t n = std::max<uint32_t>(shape.nRanks, 1);
    if (algo == Algorithm::Nvls)
    {
        // NCCL's NVLS latency is one flat term (no per-step cost), and each rank's data
        // crosses its NVLink once each way: the buffer moves at the NVLS channels' rate.
        const double bw = config.nvls.channelBytesPerSecond * nChannels;
        return config.nvls.baseLatencyNs + config.nvls.stepLatencyNs +
               (bw > 0 ? static_cast<double>(bytes) / bw * 1e9 : 0.0);
    }
    const ProtocolParams& p = config.Params(proto);
    double latency = p.baseLatencyNs;
    if (algo == Algorithm::Tree && TreeApplies(kind, shape))
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

Choice Choose(CollectiveKind kind, const CommShape& shape, uint64_t bytes, const Config& config)
{
    const std::vector<Algorithm> algos = AllowedAlgorithms(config.algorithm, kind);
    const std::vector<Protocol> protos = AllowedProtocols(config.protocol, kind);
    // Only a tree left for a collective that has none: NCCL runs it as a ring.
    const bool forcedTree = algos.size() == 1 && algos.front() == Algorithm::Tree;
    Choice best;
    best.estimatedNs = std::numeric_limits<double>::infinity();
    for (Algorithm a : algos)
    {
        // A tree is offered only where NCCL has one, unless it is all the spec allows:
        // then it runs as a ring there, as NCCL does.
        if (a == Algorithm::Tree && !TreeApplies(kind, shape) && !forcedTree)
        {
            continue;
        }
        if (a == Algorithm::Nvls && !NvlsApplies(kind, shape, config))
        {
            continue;
        }
        const bool ring = a == Algorithm::Ring || !TreeApplies(kind, shape);
        const uint32_t nChannels = ChannelsFor(
            config,
            ring ? ChannelBasisBytes(kind, std::max<uint32_t>(shape.nRanks, 1), bytes) : bytes);
        for (Protocol p : protos)
        {
            if (a == Algorithm::Nvls && p != Protocol::Simple)
            {
                continue; // NCCL's NVLS kernels exist for Simple only
            }
            // NVLS always runs on all its channels, whatever the size (NCCL's topoGetAlgoInfo).
            const uint32_t nc = a == Algorithm::Nvls ? config.nvlsChannels : nChannels;
            const double t = EstimateNs(kind, shape, bytes, a, p, nc, config);
            if (t < best.estimatedNs)
            {
                best = Choice{a, p, nc, t};
            }
        }
    }
    if (!std::isfinite(best.estimatedNs))
    {
        // As NCCL: "No algorithm/protocol available for function ..." (ncclInvalidUsage).
        throw std::invalid_argument(
            std::string("no algorithm/protocol available for ") + CollectiveName(kind) +
            " on this communicator with NCCL_ALGO '" + config.algorithm + "' and NCCL_PROTO '" +
            config.protocol + "' (NVLS needs nvls on, one node, Simple; " +
            (config.nvlsEnable ? "nvls is on)" : "nvls is off)"));
    }
    return best;
}

} // namespace phantora::nccl
