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

uint64_t ChannelBasisBytes(CollectiveKind kind, uint32_t nRanks, uint64_t bytes, Protocol proto)
{
    // NCCL 2.28 (src/enqueue.cc, topoGetAlgoInfo) drops channels while the buffer (the whole
    // one: ncclFuncMaxSendRecvCount) is below channels x threads x threadThreshold, the
    // thresholds being 8 for LL (times nRanks for a ring), 8 for LL128 and 64 for Simple
    // (NCCL_DEBUG=TUNING: "threadThresholds 8/8/64 | 32/8/64" on 4 ranks) over 512, 640
    // and 512 threads.  minBytesPerChannel is LL's 512 x 8: the other protocols' units are
    // expressed by scaling the basis.
    (void)kind;
    const uint64_t n = std::max<uint32_t>(nRanks, 1);
    switch (proto)
    {
    case Protocol::LL:
        return bytes / n;
    case Protocol::LL128:
        return bytes * 4 / 5; // 640 threads x 8 against LL's 512 x 8
    case Protocol::Simple:
        return bytes / 8;
    }
    return bytes;
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
    // NVLS needs CollNet (SHARP on the network), which no scenario declares: a communicator
    // spanning nodes gets NVLS-tree instead (NvlsTreeApplies).
    const bool collective = kind == CollectiveKind::AllReduce ||
                            kind == CollectiveKind::AllGather ||
                            kind == CollectiveKind::ReduceScatter;
    return config.nvlsEnable && collective && config.nvlsChannels >= 2 && shape.nRanks >= 2 &&
           shape.ranksPerNode >= shape.nRanks;
}

bool NvlsTreeApplies(CollectiveKind kind, const CommShape& shape, const Config& config)
{
    // NCCL 2.28 (src/graph/tuning.cc, src/enqueue.cc): NVLSTree is all-reduce only, off on a
    // single node, and needs NVLS on every node, which needs two local ranks at least.  The
    // plan wants whole nodes.
    const uint32_t perNode = shape.ranksPerNode;
    return config.nvlsEnable && kind == CollectiveKind::AllReduce && config.nvlsChannels >= 2 &&
           perNode >= 2 && perNode < shape.nRanks && shape.nRanks % perNode == 0;
}

uint32_t NodeTreeDepth(uint32_t nNodes)
{
    return static_cast<uint32_t>(std::ceil(std::log2(std::max(nNodes, 1U))));
}

double EstimateNs(CollectiveKind kind, const CommShape& shape, uint64_t bytes, Algorithm algo,
                  Protocol proto, uint32_t nChannels, const Config& config)
{
    const uint32_t n = std::max<uint32_t>(shape.nRanks, 1);
    const uint32_t perNode = std::clamp<uint32_t>(shape.ranksPerNode, 1, n);
    const uint32_t nNodes = (n + perNode - 1) / perNode;
    // What crosses nodes leaves through the node's NICs: perNode ranks' shares of them.
    const double nodeNet = config.netBytesPerSecond * perNode;
    const auto netNs = [&](double nodeBytes)
    { return nNodes > 1 && nodeNet > 0 ? nodeBytes / nodeNet * 1e9 : 0.0; };
    const double size = static_cast<double>(bytes);
    if (algo == Algorithm::Nvls || algo == Algorithm::NvlsTree)
    {
        // NCCL's NVLS latency is one flat term (no per-step cost), and each rank's data
        // crosses its NVLink once each way: the buffer moves at the NVLS channels' rate.
        const double bw = (algo == Algorithm::Nvls ? config.nvls.channelBytesPerSecond
                                                   : config.NvlsTreeChannelRate()) *
                          nChannels;
        const double nvlink = bw > 0 ? size / bw * 1e9 : 0.0;
        if (algo == Algorithm::Nvls)
        {
            return config.nvls.baseLatencyNs + config.nvls.stepLatencyNs + nvlink;
        }
        // NVLS-tree (NCCL's latency: the NVLS term plus 2 log2(nodes) network hops): every
        // local rank heads a 1/perNode share, reduced in the node by the switch and sent up
        // and down a tree of nodes through its own NIC.  An inner node of a tree takes two
        // children's shares and its parent's, a leaf one: with two nodes a share crosses
        // each NIC once each way, with more twice on average (NCCL doubles the inter-node
        // bandwidth of NVLSTree for two nodes).  The switch and the network pipeline.
        const double latency = config.nvls.baseLatencyNs + config.nvls.stepLatencyNs +
                               2.0 * NodeTreeDepth(nNodes) * config.nvlsTreeLevelLatencyNs;
        return latency + std::max(nvlink, netNs((nNodes <= 2 ? 1.0 : 2.0) * size));
    }
    const ProtocolParams& p = config.Params(proto);
    double latency =
        kind == CollectiveKind::SendRecv ? P2pBaseLatencyNs(proto, config) : p.baseLatencyNs;
    const bool tree = algo == Algorithm::Tree && TreeApplies(kind, shape);
    if (tree)
    {
        // up the tree and down again, one step per level
        latency += 2.0 * TreeDepth(shape) * (p.stepLatencyNs + config.treeLevelLatencyNs);
    }
    else
    {
        // NCCL's ring latency: every step costs the protocol's, and the steps that cross
        // nodes (2 (nodes - 1) for all-reduce, nodes - 1 for the others) the network's too,
        // the per-level cost the tree pays (NCCL: nInterSteps x interLat).
        const uint32_t steps = RingSteps(kind, n);
        const uint32_t interSteps =
            nNodes <= 1 || steps == 1
                ? 0
                : (kind == CollectiveKind::AllReduce ? 2 * (nNodes - 1) : nNodes - 1);
        latency += steps * p.stepLatencyNs + interSteps * config.treeLevelLatencyNs;
    }
    const bool p2pSimple = kind == CollectiveKind::SendRecv && proto == Protocol::Simple &&
                           config.p2pChannelBytesPerSecond > 0;
    const double bw =
        (p2pSimple ? config.p2pChannelBytesPerSecond : p.channelBytesPerSecond) * nChannels;
    const double busBytes = size * BusFactor(kind, n);
    const double wire = static_cast<double>(WireBytes(proto, bytes)) / std::max(size, 1.0);
    // A ring sends its bus bytes once through one rail per channel.  A double binary tree
    // takes twice the buffer in and out of each node (inner in one tree, a leaf in the
    // other), once with two nodes, at NCCL's 0.92 of the network for a tree all-reduce.
    const double treeBytes = (nNodes <= 2 ? 1.0 : 2.0) * size / 0.92;
    const double net = netNs(wire * (tree ? treeBytes : busBytes));
    return latency + std::max(bw > 0 ? busBytes / bw * 1e9 : 0.0, net);
}

uint32_t P2pChannels(const CommShape& shape, uint64_t bytes, const Config& config)
{
    const uint32_t n = std::max<uint32_t>(shape.nRanks, 1);
    const uint32_t total = std::max<uint32_t>(config.p2pChannels, 1);
    const uint32_t most = std::max<uint32_t>(config.p2pChannelsPerPeer, 1);
    uint32_t least = most;
    while (uint64_t{least} * n > total && least > 1)
    {
        least /= 2;
    }
    if (bytes == 0)
    {
        return 1;
    }
    const bool acrossNodes = shape.ranksPerNode < shape.nRanks;
    const uint64_t chunk = std::max<uint64_t>(config.p2pChunkBytes, 8);
    const uint64_t minPart = acrossNodes ? chunk / 2 : chunk / 8;
    const uint64_t maxPart = acrossNodes ? chunk : chunk * 32;
    auto nc = static_cast<uint32_t>(
        std::min<uint64_t>(least, (bytes + minPart - 1) / std::max<uint64_t>(minPart, 1)));
    uint64_t part = std::max<uint64_t>(minPart, (bytes + nc - 1) / nc);
    while (part > maxPart && nc <= most / 2)
    {
        nc *= 2;
        part = (bytes + nc - 1) / nc;
    }
    return nc;
}

double P2pBaseLatencyNs(Protocol proto, const Config& config)
{
    return config.p2pChannels > 0 ? config.ll.baseLatencyNs : config.Params(proto).baseLatencyNs;
}

bool RingTableApplies(CollectiveKind kind, const CommShape& shape, const Config& config)
{
    const bool collective = kind != CollectiveKind::AllToAll && kind != CollectiveKind::SendRecv;
    return collective && config.ringGraphBytesPerSecond > 0 && shape.nRanks >= 2 &&
           shape.ranksPerNode >= shape.nRanks;
}

double NcclRingTableNs(CollectiveKind kind, uint32_t nRanks, uint64_t bytes, Protocol proto,
                       const Config& config)
{
    // NCCL 2.28's src/graph/tuning.cc, ring on one NVLink node: baseLatencies[Ring] and
    // hwLatencies[NVLINK][Ring] in us, bus bandwidth from the ring graph, LL capped at
    // llMaxBw and half the graph's, LL128 at 0.92 of it and perChMaxRingLL128Bw per graph
    // channel; algorithm bandwidth = bus bandwidth x nRanks / nsteps; time = latency +
    // bytes / bandwidth (ncclTopoGetAlgoTime, one operation).  Reproduces the table NCCL
    // prints with NCCL_DEBUG_SUBSYS=TUNING (tests/data/h200x4-nvlink/nccl_logs).
    const double n = std::max<uint32_t>(nRanks, 2);
    const int p = proto == Protocol::LL ? 0 : (proto == Protocol::LL128 ? 1 : 2);
    constexpr double kBaseUs[3] = {6.6, 14.0, 8.4};
    constexpr double kHwUs[3] = {0.6, 1.9, 3.4};
    const double nsteps =
        kind == CollectiveKind::AllReduce                                              ? 2 * (n - 1)
        : (kind == CollectiveKind::AllGather || kind == CollectiveKind::ReduceScatter) ? n - 1
                                                                                       : n;
    // Broadcast and reduce pay one hop's latency when all channels take the same ring
    // (NCCL's sameChannels, as its graph search finds on an NVSwitch).
    const bool chain = kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce;
    const double latencyUs = kBaseUs[p] + (chain ? 1.0 : nsteps) * kHwUs[p];
    double busBw = config.ringGraphBytesPerSecond;
    if (proto == Protocol::LL)
    {
        busBw = std::min(config.llMaxBusBytesPerSecond, busBw * 0.5);
    }
    else if (proto == Protocol::LL128)
    {
        busBw = std::min(busBw * 0.92,
                         config.ringGraphChannels * config.ll128MaxGraphChannelBytesPerSecond);
    }
    const double algBw = busBw * n / nsteps;
    return latencyUs * 1e3 + static_cast<double>(bytes) / algBw * 1e9;
}

Choice Choose(CollectiveKind kind, const CommShape& shape, uint64_t bytes, const Config& config)
{
    const std::vector<Algorithm> algos = AllowedAlgorithms(config.algorithm, kind);
    const std::vector<Protocol> protos = AllowedProtocols(config.protocol, kind);
    if (kind == CollectiveKind::SendRecv && config.p2pChannels > 0 && !protos.empty())
    {
        // NCCL's p2p path has no tuning table: its channels by size, then LL while each
        // channel carries at most the LL threshold, Simple beyond (src/enqueue.cc).
        const uint32_t nc = P2pChannels(shape, bytes, config);
        const bool ll = bytes <= uint64_t{nc} * config.p2pLLThresholdBytes;
        const auto allowed = [&](Protocol p)
        { return std::find(protos.begin(), protos.end(), p) != protos.end(); };
        const Protocol p = ll && allowed(Protocol::LL) ? Protocol::LL
                           : allowed(Protocol::Simple) ? Protocol::Simple
                                                       : protos.front();
        return Choice{Algorithm::Ring, p, nc,
                      EstimateNs(kind, shape, bytes, Algorithm::Ring, p, nc, config)};
    }
    // NCCL 2.28 has a tree for all-reduce only (broadcast and reduce are rings, all-gather
    // and reduce-scatter rings, NVLS or PAT): a spec leaving another collective only the
    // tree leaves it nothing, and NCCL refuses the call.  Inside one node NCCL's tree is a
    // chain that never beats the ring (the 4 x H200 logs show ring everywhere): it is
    // offered there only when the spec leaves out the ring, and runs as a ring.
    const bool ringAllowed = std::find(algos.begin(), algos.end(), Algorithm::Ring) != algos.end();
    const bool forcedTree = kind == CollectiveKind::AllReduce && !ringAllowed;
    Choice best;
    best.estimatedNs = std::numeric_limits<double>::infinity();
    for (Algorithm a : algos)
    {
        if (a == Algorithm::Tree && !TreeApplies(kind, shape) && !forcedTree)
        {
            continue;
        }
        if (a == Algorithm::Nvls && !NvlsApplies(kind, shape, config))
        {
            continue;
        }
        if (a == Algorithm::NvlsTree && !NvlsTreeApplies(kind, shape, config))
        {
            continue;
        }
        const bool nvls = a == Algorithm::Nvls || a == Algorithm::NvlsTree;
        const bool ring = a == Algorithm::Ring || !TreeApplies(kind, shape);
        // A ring on one node takes the protocol NCCL's own table ranks first; its time is
        // still the model's, to weigh against the other algorithms.
        const bool table = ring && !nvls && RingTableApplies(kind, shape, config);
        Choice bestOfAlgo;
        bestOfAlgo.estimatedNs = std::numeric_limits<double>::infinity();
        double bestTable = std::numeric_limits<double>::infinity();
        for (Protocol p : protos)
        {
            if (nvls && p != Protocol::Simple)
            {
                continue; // NCCL's NVLS kernels exist for Simple only
            }
            // NVLS always runs on all its channels, whatever the size (NCCL's topoGetAlgoInfo).
            const uint32_t nc =
                nvls ? config.nvlsChannels
                     : ChannelsFor(config,
                                   ring ? ChannelBasisBytes(
                                              kind, std::max<uint32_t>(shape.nRanks, 1), bytes, p)
                                        : bytes);
            const double t = EstimateNs(kind, shape, bytes, a, p, nc, config);
            if (table)
            {
                const double tt = NcclRingTableNs(kind, shape.nRanks, bytes, p, config);
                if (tt < bestTable)
                {
                    bestTable = tt;
                    bestOfAlgo = Choice{a, p, nc, t};
                }
            }
            else if (t < bestOfAlgo.estimatedNs)
            {
                bestOfAlgo = Choice{a, p, nc, t};
            }
        }
        if (bestOfAlgo.estimatedNs < best.estimatedNs)
        {
            best = bestOfAlgo;
        }
    }
    if (!std::isfinite(best.estimatedNs))
    {
        // As NCCL: "No algorithm/protocol available for function ..." (ncclInvalidUsage).
        throw std::invalid_argument(
            std::string("no algorithm/protocol available for ") + CollectiveName(kind) +
            " on this communicator with NCCL_ALGO '" + config.algorithm + "' and NCCL_PROTO '" +
            config.protocol +
            "' (tree: all-reduce only; NVLS: nvls on, one node, Simple; NVLSTree: nvls on, "
            "all-reduce, several whole nodes of two ranks or more, Simple; " +
            (config.nvlsEnable ? "nvls is on)" : "nvls is off)"));
    }
    return best;
}

} // namespace phantora::nccl
