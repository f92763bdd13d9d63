#include "plan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace phantora::nccl
{

Plan MakeRingAllReducePlan(uint32_t nRanks, uint64_t bytes)
{
    if (nRanks == 0)
    {
        throw std::invalid_argument("a communicator needs at least one rank");
    }
    Plan plan;
    if (nRanks == 1)
    {
        return plan;
    }
    const uint64_t chunk = (bytes + nRanks - 1) / nRanks;
    const uint32_t steps = 2 * (nRanks - 1);
    // transfer index of (step, rank) = step * nRanks + rank
    for (uint32_t step = 0; step < steps; ++step)
    {
        for (uint32_t r = 0; r < nRanks; ++r)
        {
            Transfer t;
            t.src = r;
            t.dst = (r + 1) % nRanks;
            t.bytes = chunk;
            if (step > 0)
            {
                // rank r forwards what it received from its predecessor in the previous step
                const uint32_t pred = (r + nRanks - 1) % nRanks;
                t.deps.push_back((step - 1) * nRanks + pred);
            }
            plan.transfers.push_back(std::move(t));
        }
    }
    return plan;
}

namespace
{

uint64_t CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/// Builds transfers with the protocol's costs applied to each one.
class PlanBuilder
{
public:
    /// \p channelRate: bytes a channel copies per second, when not the protocol's.
    PlanBuilder(Plan& plan, const Config& config, Protocol proto, double channelRate = 0)
        : m_plan(plan), m_params(config.Params(proto)), m_proto(proto),
          m_rate(channelRate > 0 ? channelRate : m_params.channelBytesPerSecond)
    {
    }

    Protocol Proto() const { return m_proto; }

    /// Adds a transfer carrying \p dataBytes of payload; returns its index.
    uint32_t Add(uint32_t src, uint32_t dst, uint64_t dataBytes, uint32_t channel,
                 std::vector<uint32_t> deps, Picoseconds extraDelay = Picoseconds(0))
    {
        Transfer t;
        t.src = src;
        t.dst = dst;
        t.bytes = WireBytes(m_proto, dataBytes);
        t.channel = channel;
        t.delay =
            Picoseconds(static_cast<int64_t>(m_params.stepLatencyNs * 1000.0 + 0.5)) + extraDelay;
        if (m_rate > 0)
        {
            t.minDuration = Picoseconds(
                static_cast<int64_t>(static_cast<double>(dataBytes) / m_rate * 1e12 + 0.5));
        }
        t.deps = std::move(deps);
        m_plan.transfers.push_back(std::move(t));
        return static_cast<uint32_t>(m_plan.transfers.size() - 1);
    }

private:
    Plan& m_plan;
    const ProtocolParams& m_params;
    Protocol m_proto;
    double m_rate;
};

/// Chunks per channel: enough that one chunk holds at most the protocol's slice of a
/// step's data, never more than the config's bound (1 GiB must stay cheap to simulate).
uint32_t ChunksFor(uint64_t stepBytesPerChannel, const Config& config, Protocol proto)
{
    const uint64_t wanted = CeilDiv(std::max<uint64_t>(stepBytesPerChannel, 1),
                                    std::max<uint64_t>(config.ChunkBytes(proto), 1));
    return static_cast<uint32_t>(
        std::clamp<uint64_t>(wanted, 1, std::max<uint32_t>(config.maxChunksPerChannel, 1)));
}

/**
 * A pipelined sequence of steps, as ring and chain collectives run on every channel:
 * in each step a set of (src, dst) edges each carry one slice.  A slice sent by r in
 * step s is what r received in step s-1 (reduced or copied), so it waits for that
 * arrival; on each edge, chunk k+1 follows chunk k (the connection's FIFO buffer).
 * With \p serialPerSender, a rank's sends on one channel also follow each other in
 * program order (chunk by chunk, step by step): one thread block runs the channel, so
 * its copy bandwidth is shared by everything the rank sends there.  Channel c runs
 * stepsOfChannel[c % size]: channels may take different routes.
 */
using Steps = std::vector<std::vector<std::pair<uint32_t, uint32_t>>>;

void AddPipeline(PlanBuilder& b, const std::vector<Steps>& stepsOfChannel, uint32_t nChannels,
                 uint32_t nChunks, uint64_t sliceBytes, bool serialPerSender,
                 Picoseconds finalReceive = Picoseconds(0))
{
    for (uint32_t ch = 0; ch < nChannels; ++ch)
    {
        const Steps& steps = stepsOfChannel[ch % stepsOfChannel.size()];
        std::vector<std::vector<uint32_t>> prevChunk; // [step][edge] -> transfer index
        std::vector<int64_t> lastBySender;            // rank -> its latest send here
        // With finalReceive: rank -> the arrival of its previous chunk's last step, which
        // it copies out (finalReceive) before its first send of the next chunk.
        std::vector<int64_t> pendingReceive;
        for (uint32_t k = 0; k < nChunks; ++k)
        {
            std::vector<std::vector<uint32_t>> cur(steps.size());
            std::vector<bool> startedChunk;
            for (std::size_t s = 0; s < steps.size(); ++s)
            {
                for (std::size_t e = 0; e < steps[s].size(); ++e)
                {
                    const auto [src, dst] = steps[s][e];
                    std::vector<uint32_t> deps;
                    if (s > 0)
                    {
                        for (std::size_t f = 0; f < steps[s - 1].size(); ++f)
                        {
                            if (steps[s - 1][f].second == src)
                            {
                                deps.push_back(cur[s - 1][f]);
                            }
                        }
                    }
                    if (k > 0)
                    {
                        deps.push_back(prevChunk[s][e]);
                    }
                    if (serialPerSender)
                    {
                        lastBySender.resize(std::max<std::size_t>(lastBySender.size(), src + 1),
                                            -1);
                        if (lastBySender[src] >= 0)
                        {
                            deps.push_back(static_cast<uint32_t>(lastBySender[src]));
                        }
                    }
                    Picoseconds extra(0);
                    if (finalReceive > Picoseconds(0) && serialPerSender)
                    {
                        startedChunk.resize(std::max<std::size_t>(startedChunk.size(), src + 1),
                                            false);
                        pendingReceive.resize(std::max<std::size_t>(pendingReceive.size(), src + 1),
                                              -1);
                        if (!startedChunk[src] && pendingReceive[src] >= 0)
                        {
                            deps.push_back(static_cast<uint32_t>(pendingReceive[src]));
                            extra = finalReceive;
                        }
                        startedChunk[src] = true;
                    }
                    const uint32_t t = b.Add(src, dst, sliceBytes, ch, std::move(deps), extra);
                    cur[s].push_back(t);
                    if (serialPerSender)
                    {
                        lastBySender[src] = t;
                    }
                }
            }
            if (finalReceive > Picoseconds(0) && serialPerSender && !steps.empty())
            {
                for (std::size_t e = 0; e < steps.back().size(); ++e)
                {
                    const uint32_t dst = steps.back()[e].second;
                    pendingReceive.resize(std::max<std::size_t>(pendingReceive.size(), dst + 1),
                                          -1);
                    pendingReceive[dst] = cur.back()[e];
                }
            }
            prevChunk = std::move(cur);
        }
    }
}

/**
 * The order in which channel \p channel visits the ranks.  Within one node any order is
 * as good (NVSwitch); across nodes NCCL keeps each channel on one rail (with PXN the hop
 * between servers leaves and enters through NICs of the same index), so the channel's
 * ring enters and leaves every node at the same local rank: nodes are walked
 * alternately forwards and backwards from local rank c mod ranksPerNode.  With an odd
 * number of nodes the closing hop changes rail, as it does on such a machine.  Chains
 * (broadcast, reduce) start at plan rank 0, the root.
 */
std::vector<uint32_t> RailAlignedOrder(const CommShape& shape, uint32_t channel, bool chain)
{
    const uint32_t n = shape.nRanks;
    const uint32_t perNode = std::clamp<uint32_t>(shape.ranksPerNode, 1, n);
    std::vector<uint32_t> order(n);
    if (perNode == n || n % perNode != 0)
    {
        for (uint32_t r = 0; r < n; ++r)
        {
            order[r] = r;
        }
        return order;
    }
    const uint32_t rail = chain ? 0 : channel % perNode;
    for (uint32_t node = 0; node < n / perNode; ++node)
    {
        for (uint32_t i = 0; i < perNode; ++i)
        {
            const uint32_t local =
                node % 2 == 0 ? (rail + i) % perNode : (rail + perNode - 1 - i) % perNode;
            order[node * perNode + i] = node * perNode + local;
        }
    }
    return order;
}

void AddRing(PlanBuilder& b, Plan& plan, CollectiveKind kind, const CommShape& shape,
             uint64_t bytes, const Config& config)
{
    const uint32_t n = shape.nRanks;
    const uint32_t nc = plan.nChannels;
    const bool chain = kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce;
    // Channels on the same rail take the same route: build each route once.
    const uint32_t routes = std::min(nc, std::clamp<uint32_t>(shape.ranksPerNode, 1, n));
    std::vector<Steps> stepsOfChannel(chain ? 1 : routes);
    uint64_t unit = bytes; // data one edge carries per step, over all channels and chunks
    uint64_t parts = 1;    // unit = bytes / parts
    for (uint32_t c = 0; c < stepsOfChannel.size(); ++c)
    {
        const std::vector<uint32_t> order = RailAlignedOrder(shape, c, chain);
        Steps& steps = stepsOfChannel[c];
        switch (kind)
        {
        case CollectiveKind::AllReduce:
        case CollectiveKind::AllGather:
        case CollectiveKind::ReduceScatter:
        {
            // every rank passes one n-th of the buffer to its successor each step
            const uint32_t nSteps = kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1;
            std::vector<std::pair<uint32_t, uint32_t>> ring;
            for (uint32_t i = 0; i < n; ++i)
            {
                ring.emplace_back(order[i], order[(i + 1) % n]);
            }
            steps.assign(nSteps, ring);
            unit = CeilDiv(bytes, n);
            parts = n;
            break;
        }
        case CollectiveKind::Broadcast:
            // a chain from the root, the whole buffer on every edge
            for (uint32_t i = 0; i + 1 < n; ++i)
            {
                steps.push_back({{order[i], order[i + 1]}});
            }
            break;
        case CollectiveKind::Reduce:
            // the same chain, into the root
            for (uint32_t i = n - 1; i > 0; --i)
            {
                steps.push_back({{order[i], order[i - 1]}});
            }
            break;
        default:
            throw std::logic_error(std::string("AddRing: ") + CollectiveName(kind) +
                                   " is not a ring collective");
        }
    }
    const uint32_t chunks = ChunksFor(CeilDiv(unit, nc), config, b.Proto());
    plan.chunksPerChannel = chunks;
    const uint64_t slice = CeilDiv(bytes, parts * nc * chunks);
    // A ring's last step only receives, on the thread block that sends the next chunk
    // (NCCL's runRing: ... recv / recvReduceCopy, then the next chunk's first send); a
    // chain's tail sends nothing after it, so only the ring pays it on its critical path.
    Picoseconds finalReceive(0);
    if (!chain && config.recvCopyBytesPerSecond > 0)
    {
        finalReceive = Picoseconds(static_cast<int64_t>(
            static_cast<double>(slice) / config.recvCopyBytesPerSecond * 1e12 + 0.5));
        plan.fixedLatency += finalReceive; // the last chunk's, after its last delivery
    }
    AddPipeline(b, stepsOfChannel, nc, chunks, slice, true, finalReceive);
}

/// All-to-all and send/recv: independent pairs, each pair's data split over channels
/// and chunked, one chunk after the other per pair and channel.
void AddPairs(PlanBuilder& b, Plan& plan, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
              uint64_t pairBytes, const Config& config)
{
    const bool sendRecv = pairs.size() == 1;
    const uint32_t nc = plan.nChannels;
    // NCCL's p2p Simple steps are its P2P chunk (when the scenario gives NCCL's p2p setup).
    Config p2p = config;
    if (sendRecv && config.p2pChannels > 0)
    {
        p2p.simple.chunkBytes = config.p2pChunkBytes;
    }
    const uint32_t chunks = ChunksFor(CeilDiv(pairBytes, nc), p2p, b.Proto());
    plan.chunksPerChannel = chunks;
    const uint64_t slice = CeilDiv(pairBytes, uint64_t{nc} * chunks);
    if (sendRecv && config.p2pChannels > 0 && b.Proto() == Protocol::Simple &&
        config.recvCopyBytesPerSecond > 0)
    {
        // Simple lands in the receiver's FIFO (P2P write) and the receiver's thread block
        // copies each chunk out into the user buffer while the next one arrives: the last
        // chunk's copy comes after the last delivery.
        plan.fixedLatency += Picoseconds(static_cast<int64_t>(
            static_cast<double>(slice) / config.recvCopyBytesPerSecond * 1e12 + 0.5));
    }
    AddPipeline(b, {Steps{pairs}}, nc, chunks, slice, false);
}

/**
 * NCCL's double binary tree all-reduce.  Inside a node the ranks form a chain below
 * the node's head rank; the nodes' heads form a binary tree, and every other
 * channel uses the mirrored tree so that leaves of one are inner nodes of the other.
 * Each chunk is reduced up to the root, then broadcast down.
 */
void AddTree(PlanBuilder& b, Plan& plan, const CommShape& shape, uint64_t bytes,
             const Config& config)
{
    const uint32_t n = shape.nRanks;
    const uint32_t perNode = std::clamp<uint32_t>(shape.ranksPerNode, 1, n);
    const uint32_t nNodes = CeilDiv(n, perNode);
    const uint32_t nc = plan.nChannels;
    const uint32_t chunks = ChunksFor(CeilDiv(bytes, nc), config, b.Proto());
    plan.chunksPerChannel = chunks;
    const uint64_t slice = CeilDiv(bytes, uint64_t{nc} * chunks);
    for (uint32_t ch = 0; ch < nc; ++ch)
    {
        const bool mirrored = ch % 2 == 1;
        // Each pair of channels (a tree and its mirror) leaves the nodes through another
        // local rank, as NCCL spreads its trees over the NICs; the others chain below it.
        const uint32_t head = n % perNode == 0 ? (ch / 2) % perNode : 0;
        std::vector<int64_t> parent(n, -1);
        for (uint32_t r = 0; r < n; ++r)
        {
            const uint32_t node = r / perNode;
            const uint32_t local = r % perNode;
            if (local != head)
            {
                parent[r] = node * perNode + (local + perNode - 1) % perNode;
                continue;
            }
            const uint32_t m = mirrored ? nNodes - 1 - node : node;
            if (m == 0)
            {
                continue;
            }
            const uint32_t pm = (m - 1) / 2;
            parent[r] = static_cast<int64_t>((mirrored ? nNodes - 1 - pm : pm) * perNode + head);
        }
        std::vector<uint32_t> depth(n, 0);
        std::vector<uint32_t> order; // ranks by increasing depth
        for (uint32_t r = 0; r < n; ++r)
        {
            for (int64_t p = parent[r]; p >= 0; p = parent[static_cast<uint32_t>(p)])
            {
                ++depth[r];
            }
            order.push_back(r);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t x, uint32_t y) { return depth[x] < depth[y]; });
        std::vector<int64_t> prevUp(n, -1);
        std::vector<int64_t> prevDown(n, -1);
        for (uint32_t k = 0; k < chunks; ++k)
        {
            std::vector<std::vector<uint32_t>> upInto(n); // transfers arriving at r going up
            std::vector<int64_t> downInto(n, -1);
            for (auto it = order.rbegin(); it != order.rend(); ++it)
            {
                const uint32_t r = *it;
                if (parent[r] < 0)
                {
                    continue;
                }
                std::vector<uint32_t> deps = upInto[r];
                if (prevUp[r] >= 0)
                {
                    deps.push_back(static_cast<uint32_t>(prevUp[r]));
                }
                const uint32_t t =
                    b.Add(r, static_cast<uint32_t>(parent[r]), slice, ch, std::move(deps));
                upInto[static_cast<uint32_t>(parent[r])].push_back(t);
                prevUp[r] = t;
            }
            for (uint32_t r : order)
            {
                if (parent[r] < 0)
                {
                    continue;
                }
                const auto p = static_cast<uint32_t>(parent[r]);
                // the root sends down once everything came up; others once it came down
                std::vector<uint32_t> deps =
                    parent[p] < 0 ? upInto[p]
                                  : std::vector<uint32_t>{static_cast<uint32_t>(downInto[p])};
                if (prevDown[r] >= 0)
                {
                    deps.push_back(static_cast<uint32_t>(prevDown[r]));
                }
                const uint32_t t = b.Add(p, r, slice, ch, std::move(deps));
                downInto[r] = t;
                prevDown[r] = t;
            }
        }
    }
}

/**
 * NCCL's single-node NVLS collectives (src/device/all_reduce.h, RunWorkColl<..., NVLS>):
 * every rank is the head of one n-th of each step's data.  Head j's reduce warps load its
 * slice through the multicast address (multimem.ld_reduce: the NVSwitch reads the slice
 * from every GPU and returns the sum) and store the sum through it (multimem.st: the switch
 * writes it into every GPU).  The scatter into and gather out of the NVLS buffers are local
 * copies and cross no NVLink.  So each rank's NVLink carries its whole buffer once up and
 * the result once down (plus its own slice once more each way), against 2(n-1)/n of the
 * buffer each way for a ring.
 *
 * As transfers: per channel, step and head, a switch reduce (every rank -> head) and a
 * switch multicast (head -> every rank), started together (the warps stream one into the
 * other); a head's next step starts when both are delivered.  All-gather has the multicasts
 * only (each rank's own piece), reduce-scatter the reduces only.  A channel's SMs bound its
 * rate (nvls.channelBytesPerSecond of the buffer), the links the rest.
 */
void AddNvls(Plan& plan, CollectiveKind kind, const CommShape& shape, uint64_t bytes,
             const Config& config)
{
    const uint32_t n = shape.nRanks;
    const uint32_t nc = plan.nChannels;
    const uint64_t perStep = uint64_t{nc} * n; // slices of the buffer in one step
    const auto steps = static_cast<uint32_t>(std::clamp<uint64_t>(
        CeilDiv(bytes, perStep * std::max<uint64_t>(config.nvls.chunkBytes, 1)), 1,
        std::max<uint32_t>(config.maxChunksPerChannel, 1)));
    plan.chunksPerChannel = steps;
    const uint64_t slice = CeilDiv(bytes, perStep * steps);
    const double rate = config.nvls.channelBytesPerSecond;
    // All n heads of a channel share its SMs' rate: one step of n slices takes n * slice / rate.
    const Picoseconds minDuration =
        rate > 0
            ? Picoseconds(static_cast<int64_t>(static_cast<double>(n * slice) / rate * 1e12 + 0.5))
            : Picoseconds(0);
    const Picoseconds delay(static_cast<int64_t>(config.nvls.stepLatencyNs * 1000.0 + 0.5));
    std::vector<uint32_t> all(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        all[r] = r;
    }
    const bool reduce = kind != CollectiveKind::AllGather;
    const bool multicast = kind != CollectiveKind::ReduceScatter;
    auto add = [&](std::vector<uint32_t> srcs, std::vector<uint32_t> dsts, uint32_t ch,
                   const std::vector<uint32_t>& deps)
    {
        Transfer t;
        t.src = srcs.front();
        t.dst = dsts.front();
        t.bytes = slice; // Simple: the data as is
        t.channel = ch;
        t.delay = delay;
        t.minDuration = minDuration;
        t.deps = deps;
        t.switchSrcs = std::move(srcs);
        t.switchDsts = std::move(dsts);
        plan.transfers.push_back(std::move(t));
        return static_cast<uint32_t>(plan.transfers.size() - 1);
    };
    for (uint32_t ch = 0; ch < nc; ++ch)
    {
        std::vector<std::vector<uint32_t>> prev(n); // per head: its previous step's transfers
        for (uint32_t k = 0; k < steps; ++k)
        {
            for (uint32_t j = 0; j < n; ++j)
            {
                std::vector<uint32_t> cur;
                if (reduce)
                {
                    cur.push_back(add(all, {j}, ch, prev[j]));
                }
                if (multicast)
                {
                    cur.push_back(add({j}, all, ch, prev[j]));
                }
                prev[j] = std::move(cur);
            }
        }
    }
}

/**
 * NCCL's NVLS-tree all-reduce across nodes (src/device/all_reduce.h,
 * RunWorkColl<ncclFuncAllReduce, ..., NCCL_ALGO_NVLS_TREE, ...>): inside each node NVLS,
 * between the nodes a tree.  Every local rank j heads one perNode-th of each step's data
 * (NCCL's nvls.nHeads: one head per NIC); its reduce warps sum its share over the node
 * through the switch (multimem.ld_reduce), its tree-up warps send the node's sum to head j
 * of the parent node and add what head j of the child nodes sent, the root's result comes
 * back down the tree, and each head's broadcast warps store it through the switch into
 * every GPU of its node (multimem.st).  The tree over nodes is NCCL's double binary tree:
 * odd channels use the mirrored tree, so that a node is inner in one and a leaf in the other.
 *
 * As transfers, per channel, step and head j: in every node a switch reduce (the node's
 * ranks -> its head j); up the tree, head j of a node -> head j of its parent once its own
 * reduce and its children's shares are in; down the tree, parent -> child once the parent
 * has the result; in every node a switch multicast (head j -> the node's ranks) once the
 * head has it.  Each role of a head (reduce, up, down, multicast) takes its steps one after
 * the other, as NCCL's warps of one role do, so the steps pipeline.  NVLS transfers carry
 * nvls.stepLatencyNs and the NVLS-tree channel rate (Config::NvlsTreeChannelRate) as AddNvls
 * does; the network hops Simple's step latency, the network alone deciding their rate.
 */
void AddNvlsTree(Plan& plan, const CommShape& shape, uint64_t bytes, const Config& config)
{
    const uint32_t n = shape.nRanks;
    const uint32_t perNode = shape.ranksPerNode;
    const uint32_t nNodes = n / perNode;
    const uint32_t nc = plan.nChannels;
    const uint64_t perStep = uint64_t{nc} * perNode; // shares of the buffer in one step
    // Pipeline steps as NVLS's, but a plan of 128 nodes must stay cheap to simulate: at
    // most about 2^18 transfers, never fewer steps than the tree has hops up and down.
    const uint64_t perStepTransfers = 4 * uint64_t{nc} * n;
    const uint64_t bound = std::max<uint64_t>(
        std::min<uint64_t>(std::max<uint32_t>(config.maxChunksPerChannel, 1),
                           (uint64_t{1} << 18) / std::max<uint64_t>(perStepTransfers, 1)),
        std::min<uint64_t>(2 * NodeTreeDepth(nNodes) + 2,
                           std::max<uint32_t>(config.maxChunksPerChannel, 1)));
    const auto steps = static_cast<uint32_t>(std::clamp<uint64_t>(
        CeilDiv(bytes, perStep * std::max<uint64_t>(config.nvls.chunkBytes, 1)), 1, bound));
    plan.chunksPerChannel = steps;
    const uint64_t slice = CeilDiv(bytes, perStep * steps);
    const double rate = config.NvlsTreeChannelRate();
    const Picoseconds switchMin =
        rate > 0 ? Picoseconds(static_cast<int64_t>(
                       static_cast<double>(perNode * slice) / rate * 1e12 + 0.5))
                 : Picoseconds(0);
    const Picoseconds switchDelay(static_cast<int64_t>(config.nvls.stepLatencyNs * 1000.0 + 0.5));
    const Picoseconds netDelay(static_cast<int64_t>(config.simple.stepLatencyNs * 1000.0 + 0.5));
    auto add = [&](std::vector<uint32_t> srcs, std::vector<uint32_t> dsts, uint32_t ch,
                   std::vector<uint32_t> deps, bool throughSwitch)
    {
        Transfer t;
        t.src = srcs.front();
        t.dst = dsts.front();
        t.bytes = slice; // Simple: the data as is
        t.channel = ch;
        t.delay = throughSwitch ? switchDelay : netDelay;
        t.minDuration = throughSwitch ? switchMin : Picoseconds(0);
        t.deps = std::move(deps);
        if (throughSwitch)
        {
            t.switchSrcs = std::move(srcs);
            t.switchDsts = std::move(dsts);
        }
        plan.transfers.push_back(std::move(t));
        return static_cast<uint32_t>(plan.transfers.size() - 1);
    };
    std::vector<std::vector<uint32_t>> nodeRanks(nNodes);
    for (uint32_t node = 0; node < nNodes; ++node)
    {
        for (uint32_t i = 0; i < perNode; ++i)
        {
            nodeRanks[node].push_back(node * perNode + i);
        }
    }
    for (uint32_t ch = 0; ch < nc; ++ch)
    {
        // The binary tree over nodes (heap order), mirrored on odd channels.
        const bool mirrored = ch % 2 == 1;
        std::vector<int64_t> parent(nNodes, -1);
        std::vector<std::vector<uint32_t>> children(nNodes);
        for (uint32_t node = 0; node < nNodes; ++node)
        {
            const uint32_t m = mirrored ? nNodes - 1 - node : node;
            if (m == 0)
            {
                continue;
            }
            const uint32_t pm = (m - 1) / 2;
            const uint32_t p = mirrored ? nNodes - 1 - pm : pm;
            parent[node] = p;
            children[p].push_back(node);
        }
        // Nodes by increasing depth, so that parents come before children going down.
        std::vector<uint32_t> order(nNodes);
        std::vector<uint32_t> depth(nNodes, 0);
        for (uint32_t node = 0; node < nNodes; ++node)
        {
            order[node] = node;
            for (int64_t p = parent[node]; p >= 0; p = parent[static_cast<uint32_t>(p)])
            {
                ++depth[node];
            }
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t x, uint32_t y) { return depth[x] < depth[y]; });
        // Each stage of a head is a FIFO, as NCCL's warps of one role run one step after
        // the other: per (rank of head j) its last reduce, up, down and multicast.
        std::vector<int64_t> lastReduce(n, -1), lastUp(n, -1), lastDown(n, -1), lastCast(n, -1);
        const auto after = [](std::vector<uint32_t> deps, int64_t last)
        {
            if (last >= 0)
            {
                deps.push_back(static_cast<uint32_t>(last));
            }
            return deps;
        };
        for (uint32_t k = 0; k < steps; ++k)
        {
            for (uint32_t j = 0; j < perNode; ++j)
            {
                std::vector<uint32_t> reduced(nNodes); // the node's switch reduce into head j
                for (uint32_t node = 0; node < nNodes; ++node)
                {
                    const uint32_t head = node * perNode + j;
                    reduced[node] =
                        add(nodeRanks[node], {head}, ch, after({}, lastReduce[head]), true);
                    lastReduce[head] = reduced[node];
                }
                // Up: deepest nodes first, each once its reduce and its children's are in.
                std::vector<std::vector<uint32_t>> upInto(nNodes);
                for (auto it = order.rbegin(); it != order.rend(); ++it)
                {
                    const uint32_t node = *it;
                    if (parent[node] < 0)
                    {
                        continue;
                    }
                    const uint32_t head = node * perNode + j;
                    std::vector<uint32_t> deps = upInto[node];
                    deps.push_back(reduced[node]);
                    const auto p = static_cast<uint32_t>(parent[node]);
                    const uint32_t t = add({head}, {p * perNode + j}, ch,
                                           after(std::move(deps), lastUp[head]), false);
                    upInto[p].push_back(t);
                    lastUp[head] = t;
                }
                // Down, and the multicast in each node once its head has the result.
                std::vector<std::vector<uint32_t>> has(nNodes); // head j holds the result
                for (uint32_t node : order)
                {
                    const uint32_t head = node * perNode + j;
                    if (parent[node] < 0)
                    {
                        has[node] = upInto[node];
                        has[node].push_back(reduced[node]);
                    }
                    else
                    {
                        const auto p = static_cast<uint32_t>(parent[node]);
                        const uint32_t t = add({p * perNode + j}, {head}, ch,
                                               after(has[p], lastDown[head]), false);
                        lastDown[head] = t;
                        has[node] = {t};
                    }
                    lastCast[head] =
                        add({head}, nodeRanks[node], ch, after(has[node], lastCast[head]), true);
                }
            }
        }
    }
}

} // namespace

Plan MakePlan(CollectiveKind kind, const CommShape& shape, uint64_t bytes, const Config& config)
{
    return MakePlan(kind, shape, bytes, config, Choose(kind, shape, bytes, config));
}

Plan MakePlan(CollectiveKind kind, const CommShape& shape, uint64_t bytes, const Config& config,
              const Choice& choice)
{
    const uint32_t n = shape.nRanks;
    if (n == 0)
    {
        throw std::invalid_argument("a communicator needs at least one rank");
    }
    if (kind == CollectiveKind::SendRecv && n < 2)
    {
        throw std::invalid_argument("send/recv needs two ranks");
    }
    Plan plan;
    plan.algorithm = AlgorithmName(choice.algorithm);
    plan.protocol = ProtocolName(choice.protocol);
    plan.nChannels = std::max<uint32_t>(choice.nChannels, 1);
    const ProtocolParams& params = config.Params(choice.protocol);
    plan.fixedLatency = Picoseconds(static_cast<int64_t>(params.baseLatencyNs * 1000.0 + 0.5));
    if (n == 1 && kind != CollectiveKind::SendRecv)
    {
        return plan; // nothing crosses the network; the kernel still costs its latency
    }
    if (choice.algorithm == Algorithm::NvlsTree)
    {
        if (!NvlsTreeApplies(kind, shape, config))
        {
            throw std::invalid_argument(std::string("NVLSTree cannot run ") + CollectiveName(kind) +
                                        " on this communicator (NVLS off, not an all-reduce, one "
                                        "node, or nodes of fewer than two ranks)");
        }
        plan.fixedLatency =
            Picoseconds(static_cast<int64_t>(config.nvls.baseLatencyNs * 1000.0 + 0.5));
        AddNvlsTree(plan, shape, bytes, config);
        return plan;
    }
    if (choice.algorithm == Algorithm::Nvls)
    {
        if (!NvlsApplies(kind, shape, config))
        {
            throw std::invalid_argument(std::string("NVLS cannot run ") + CollectiveName(kind) +
                                        " on this communicator (NVLS off, several nodes, or "
                                        "fewer than two ranks or NVLS channels)");
        }
        plan.fixedLatency =
            Picoseconds(static_cast<int64_t>(config.nvls.baseLatencyNs * 1000.0 + 0.5));
        AddNvls(plan, kind, shape, bytes, config);
        return plan;
    }
    PlanBuilder b(plan, config, choice.protocol,
                  kind == CollectiveKind::SendRecv && choice.protocol == Protocol::Simple
                      ? config.p2pChannelBytesPerSecond
                      : 0.0);
    const bool tree = choice.algorithm == Algorithm::Tree && kind == CollectiveKind::AllReduce &&
                      shape.ranksPerNode < n;
    if (!tree)
    {
        plan.algorithm = "ring"; // a tree inside one node (or for other collectives) is a ring
    }
    switch (kind)
    {
    case CollectiveKind::AllReduce:
        if (tree)
        {
            AddTree(b, plan, shape, bytes, config);
            break;
        }
        [[fallthrough]];
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce:
        AddRing(b, plan, kind, shape, bytes, config);
        break;
    case CollectiveKind::AllToAll:
    {
        std::vector<std::pair<uint32_t, uint32_t>> pairs;
        for (uint32_t r = 0; r < n; ++r)
        {
            for (uint32_t q = 0; q < n; ++q)
            {
                if (q != r)
                {
                    pairs.emplace_back(r, q);
                }
            }
        }
        plan.algorithm = "p2p";
        AddPairs(b, plan, pairs, CeilDiv(bytes, n), config);
        break;
    }
    case CollectiveKind::SendRecv:
        plan.algorithm = "p2p";
        AddPairs(b, plan, {{0, 1}}, bytes, config);
        break;
    }
    if (plan.algorithm == "p2p")
    {
        // NCCL's p2p kernel, not a collective's: its own fixed cost on top of the launch.
        const double p2pNs = (kind == CollectiveKind::SendRecv
                                  ? P2pBaseLatencyNs(choice.protocol, config) - params.baseLatencyNs
                                  : 0.0) +
                             config.p2pLatencyNs;
        plan.fixedLatency += Picoseconds(static_cast<int64_t>(std::llround(p2pNs * 1000.0)));
    }
    return plan;
}

Plan BackToBack(const Plan& one, uint32_t calls)
{
    if (calls == 0)
    {
        throw std::invalid_argument("BackToBack: zero calls");
    }
    if (one.callStarts.size() > 1)
    {
        throw std::invalid_argument("BackToBack: the plan already holds several calls");
    }
    Plan plan = one;
    const auto size = static_cast<uint32_t>(one.transfers.size());
    plan.transfers.reserve(std::size_t{size} * calls);
    plan.callStarts.assign(1, 0);
    for (uint32_t k = 1; k < calls; ++k)
    {
        plan.callStarts.push_back(k * size);
        for (const Transfer& t : one.transfers)
        {
            Transfer copy = t;
            for (uint32_t& d : copy.deps)
            {
                d += k * size;
            }
            plan.transfers.push_back(std::move(copy));
        }
    }
    return plan;
}

} // namespace phantora::nccl
