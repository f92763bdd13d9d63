#include "engine/collective_launch.h"

#include "engine/copies.h"
#include "nccl/collective_kind.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace phantora
{

CollectiveLaunch::CollectiveLaunch(const Scenario& scenario, NetworkModel& network,
                                   std::vector<DeviceTimeline>& timelines, const NcclSettings& nccl,
                                   const FoldLayout& fold)
    : m_scenario(scenario), m_network(network), m_timelines(timelines), m_nccl(nccl), m_fold(fold),
      m_matcher([this](const MatchedCollective& c) { StartMatched(c); }),
      m_p2p([this](const P2PMatcher::Transfer& t, std::function<void(int64_t)> done)
            { StartTransfer(t, std::move(done)); },
            [this](int rank, uint64_t ticket, int64_t endNs)
            { m_timelines[static_cast<std::size_t>(rank)].CompleteCollective(ticket, endNs); })
{
}

const std::vector<int>& CollectiveLaunch::AbsentMembersOf(const Communicator& comm, int live)
{
    auto [it, fresh] = m_absentMembers.try_emplace({comm.handle, live});
    if (fresh && m_fold.Folds())
    {
        for (std::size_t i = 0; i < comm.ranks.size(); ++i)
        {
            const int r = comm.ranks[i];
            if (!m_fold.IsLive(r) && m_fold.Representative(r) == live)
            {
                it->second.push_back(static_cast<int>(i));
            }
        }
    }
    return it->second;
}

uint64_t CollectiveLaunch::NumberCollective(uint64_t comm, int rank)
{
    return m_issued[{comm, rank}]++;
}

bool CollectiveLaunch::Issued(uint64_t comm, int rank, uint64_t sequence) const
{
    // An absent rank issues each collective when the live rank standing for it does.
    auto it = m_issued.find({comm, m_fold.Representative(rank)});
    return it != m_issued.end() && it->second > sequence;
}

int64_t CollectiveLaunch::LastIssueNs(uint64_t comm, uint64_t sequence) const
{
    auto it = m_lastIssueNs.find({comm, sequence});
    return it == m_lastIssueNs.end() ? 0 : it->second;
}

bool CollectiveLaunch::AllIssued(const Communicator& comm, uint64_t sequence) const
{
    for (int member : comm.ranks)
    {
        auto it = m_issued.find({comm.handle, m_fold.Representative(member)});
        if (it == m_issued.end() || it->second <= sequence)
        {
            return false; // a member has not issued it yet
        }
    }
    return true;
}

void CollectiveLaunch::EnqueueCollective(const RequestContext& ctx, const Communicator& comm,
                                         int member, uint64_t sequence,
                                         const wire::NcclCollective& m, uint64_t rankCollectives)
{
    const uint64_t ticket = NextTicket();
    m_ticketOrder[ticket] = {ctx.rank, rankCollectives};
    int64_t& issuedAt = m_lastIssueNs[{comm.handle, sequence}];
    issuedAt = std::max(issuedAt, ctx.nowNs);
    // Its kernel holds the SMs of the channels NCCL picks, for the time the tuning model
    // gives it; one rank's is a copy inside its GPU, no NCCL kernel to count, and one NCCL
    // refuses holds none until it starts and ends the run saying why.
    const CollectiveChoice chosen = ChooseOnce(comm, sequence, m.op, m.bytes);
    const bool kernel = comm.ranks.size() >= 2 && chosen.choice;
    const uint32_t channels = kernel ? chosen.choice->nChannels : 0;
    const int64_t expectedNs = kernel ? std::llround(chosen.choice->estimatedNs) : 0;
    const std::vector<int>& absent = AbsentMembersOf(comm, ctx.rank);
    m_timelines[static_cast<std::size_t>(ctx.rank)].EnqueueCollective(
        m.stream, ctx.nowNs, ticket,
        [this, &comm, &absent, sequence, member, op = m.op, bytes = m.bytes, ticket,
         root = m.root](int64_t readyNs)
        {
            // Its absent replicas reach it at the same instant: they run the same code on
            // the same shapes (docs/folding.md).  They hold no ticket of a timeline.
            for (int a : absent)
            {
                m_matcher.Ready(comm, sequence, a, op, bytes, 0, readyNs, root);
            }
            m_matcher.Ready(comm, sequence, member, op, bytes, ticket, readyNs, root);
        },
        fmt::format("{} {} B", CollectiveName(m.op), m.bytes), channels, expectedNs);
}

CollectiveLaunch::P2PBatch CollectiveLaunch::NumberP2P(const Communicator& comm, int member,
                                                       const std::vector<wire::P2POp>& ops)
{
    P2PBatch batch;
    batch.ops.reserve(ops.size());
    for (const wire::P2POp& op : ops)
    {
        batch.ops.push_back(m_p2p.Number(comm, member, op));
        batch.bytes += op.bytes;
    }
    return batch;
}

std::optional<int64_t> CollectiveLaunch::SendIssueNs(uint64_t comm, int from, int to,
                                                     uint64_t sequence) const
{
    auto it = m_sendIssueNs.find({comm, from, to, sequence});
    if (it == m_sendIssueNs.end())
    {
        return std::nullopt;
    }
    return it->second;
}

void CollectiveLaunch::EnqueueP2P(const RequestContext& ctx, const Communicator& comm, int member,
                                  uint64_t stream, P2PBatch batch)
{
    for (const P2PMatcher::Op& op : batch.ops)
    {
        if (op.send)
        {
            m_sendIssueNs[{comm.handle, member, op.peer, op.sequence}] = ctx.nowNs;
        }
    }
    const uint64_t ticket = NextTicket();
    const std::string label = fmt::format("send/recv {} ops {} B", batch.ops.size(), batch.bytes);
    const auto [channels, expectedNs] = P2PKernel(comm, batch.bytes);
    m_timelines[static_cast<std::size_t>(ctx.rank)].EnqueueCollective(
        stream, ctx.nowNs, ticket,
        [this, &comm, member, ticket, ops = std::move(batch.ops)](int64_t readyNs)
        { m_p2p.Ready(comm, member, ticket, ops, readyNs); },
        label, channels, expectedNs);
}

std::vector<std::string> CollectiveLaunch::Incomplete() const
{
    std::vector<std::string> open = m_matcher.Incomplete();
    for (auto& s : m_p2p.Incomplete())
    {
        open.push_back(std::move(s));
    }
    return open;
}

void CollectiveLaunch::StartTransfer(const P2PMatcher::Transfer& t,
                                     std::function<void(int64_t)> done)
{
    const auto src = static_cast<uint32_t>(t.comm->ranks[static_cast<std::size_t>(t.from)]);
    const auto dst = static_cast<uint32_t>(t.comm->ranks[static_cast<std::size_t>(t.to)]);
    if (src == dst)
    {
        // A rank's send to itself is a copy inside its own GPU.
        done(t.startNs + CopyDurationNs(m_scenario.gpu, wire::CopyKind::DeviceToDevice, t.bytes));
        return;
    }
    // Each matched pair runs as NCCL runs one send/recv; the pairs of one group share the
    // network.  A lone pair gets the channels and protocol NCCL picks for its size; pairs
    // of a group those NCCL picks for the group (as for an all-to-all of its bytes).  This
    // is the one choice for the transfer, made here and not carried from EnqueueP2P: a
    // rank's batch there is one side's ops, priced as one pair of its total bytes on one
    // node to size its kernel, while the pair's nodes, its own bytes and the group it
    // belongs to are known only once both sides are matched.
    const uint32_t perNode = std::max(m_scenario.topology.gpusPerNode, 1U);
    nccl::CommShape pair;
    pair.nRanks = 2;
    pair.ranksPerNode = src / perNode == dst / perNode ? 2 : 1;
    nccl::Plan plan;
    if (t.groupOps > 1)
    {
        nccl::CommShape group;
        group.nRanks = static_cast<uint32_t>(t.comm->ranks.size());
        group.ranksPerNode = std::min(group.nRanks, perNode);
        plan = nccl::MakePlan(
            nccl::CollectiveKind::SendRecv, pair, t.bytes, m_nccl.For(*t.comm),
            nccl::Choose(nccl::CollectiveKind::AllToAll, group, t.groupBytes, m_nccl.For(*t.comm)));
    }
    else
    {
        const nccl::Config& config = m_nccl.For(*t.comm);
        plan = nccl::MakePlan(
            nccl::CollectiveKind::SendRecv, pair, t.bytes, config,
            nccl::Choose(nccl::CollectiveKind::SendRecv, P2PShape(*t.comm, pair), t.bytes, config));
    }
    // Ordered among same-instant starts by who sends what, never by arrival.
    const NetworkModel::OrderKey order{src, (uint64_t{1} << 63) | (uint64_t{dst} << 44) |
                                                (t.sequence & ((uint64_t{1} << 44) - 1))};
    // Folded (both ends are live: OnP2P refuses others): each absent replica's copy too.
    for (int d = 1; d < m_fold.Replicas(); ++d)
    {
        const auto copySrc = static_cast<uint32_t>(m_fold.InReplica(static_cast<int>(src), d));
        const auto copyDst = static_cast<uint32_t>(m_fold.InReplica(static_cast<int>(dst), d));
        m_network.StartCollective(
            t.startNs, plan, {copySrc, copyDst}, [](int64_t) {},
            {copySrc, (uint64_t{1} << 63) | (uint64_t{copyDst} << 44) |
                          (t.sequence & ((uint64_t{1} << 44) - 1))},
            fmt::format("send/recv {} B (replica {})", t.bytes, d));
    }
    m_network.StartCollective(t.startNs, std::move(plan), {src, dst}, std::move(done), order,
                              fmt::format("send/recv {} B", t.bytes));
}

nccl::CommShape CollectiveLaunch::P2PShape(const Communicator& comm,
                                           const nccl::CommShape& pair) const
{
    // NCCL sizes a send/recv's channels by the communicator's rank count and whether it
    // spans nodes, not by the pair (nccl::P2pChannels); without NCCL's p2p setup in the
    // scenario the pair's own shape prices it, as before that was known.
    return m_nccl.For(comm).p2pChannels > 0 ? ShapeOf(static_cast<uint32_t>(comm.ranks.size()))
                                            : pair;
}

nccl::CommShape CollectiveLaunch::ShapeOf(uint32_t nRanks) const
{
    nccl::CommShape shape;
    shape.nRanks = nRanks;
    shape.ranksPerNode = std::min(nRanks, std::max(m_scenario.topology.gpusPerNode, 1U));
    return shape;
}

CollectiveLaunch::CollectiveChoice
CollectiveLaunch::ChoiceFor(wire::CollectiveOp op, const Communicator& comm, uint64_t bytes) const
{
    CollectiveChoice c;
    c.op = op;
    c.bytes = bytes;
    try
    {
        c.choice = nccl::Choose(op, ShapeOf(static_cast<uint32_t>(comm.ranks.size())), bytes,
                                m_nccl.For(comm));
    }
    catch (const std::invalid_argument& e)
    {
        // NCCL refuses the call (NCCL_ALGO=tree for an all-gather): StartMatched reports it
        // when the collective starts, as MakePlan would.
        c.refusal = e.what();
    }
    return c;
}

CollectiveLaunch::CollectiveChoice CollectiveLaunch::ChooseOnce(const Communicator& comm,
                                                                uint64_t sequence,
                                                                wire::CollectiveOp op,
                                                                uint64_t bytes)
{
    // Chosen once per collective and carried to its plan: nothing the choice depends on
    // changes between its members' enqueues and its start.  The communicator's settings
    // are fixed when it is created, before any member leaves the creation call
    // (CommunicatorSetup, NcclSettings::Settle); its ranks, hence its shape, never change;
    // and the matcher starts it only if every member called the same operation on the same
    // bytes.
    auto [it, first] = m_choices.try_emplace({comm.handle, sequence});
    if (first)
    {
        it->second = ChoiceFor(op, comm, bytes);
    }
    else if (it->second.op != op || it->second.bytes != bytes)
    {
        // Another call than the first member's: the matcher ends the run naming both when
        // this member's stream reaches it; until then its kernel is its own call's.
        return ChoiceFor(op, comm, bytes);
    }
    return it->second;
}

std::pair<uint32_t, int64_t> CollectiveLaunch::P2PKernel(const Communicator& comm,
                                                         uint64_t bytes) const
{
    if (comm.ranks.size() < 2)
    {
        return {0, 0}; // one rank: a copy inside its GPU, no NCCL kernel to count
    }
    try
    {
        // The channels NCCL gives one send/recv of that size on this communicator.
        const nccl::Choice c = nccl::Choose(nccl::CollectiveKind::SendRecv,
                                            P2PShape(comm, ShapeOf(2)), bytes, m_nccl.For(comm));
        return {c.nChannels, std::llround(c.estimatedNs)};
    }
    catch (const std::invalid_argument&)
    {
        return {0, 0}; // a spec NCCL refuses: the transfer reports it when it starts
    }
}

void CollectiveLaunch::StartMatched(const MatchedCollective& c)
{
    const auto n = static_cast<uint32_t>(c.comm->ranks.size());
    // Plans put the root of a broadcast or reduce at plan rank 0: rotate the ring to it.
    std::vector<uint32_t> gpus;
    gpus.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        gpus.push_back(
            static_cast<uint32_t>(c.comm->ranks[(i + static_cast<uint32_t>(c.root)) % n]));
    }
    std::vector<std::pair<int, uint64_t>> members;
    std::vector<uint32_t> memberIndex; // each live member's rank in the communicator
    NetworkModel::OrderKey order{std::numeric_limits<int64_t>::max(), 0};
    for (uint32_t i = 0; i < n; ++i)
    {
        if (!m_fold.IsLive(c.comm->ranks[i]))
        {
            continue; // absent: no timeline of its own to release
        }
        members.emplace_back(c.comm->ranks[i], c.memberTickets[i]);
        memberIndex.push_back(i);
        auto it = m_ticketOrder.find(c.memberTickets[i]);
        if (it != m_ticketOrder.end())
        {
            order = std::min(order, it->second);
            m_ticketOrder.erase(it);
        }
    }
    // The choice its first member's enqueue made (ChooseOnce).
    auto chosen = m_choices.find({c.comm->handle, c.sequence});
    if (chosen == m_choices.end() || chosen->second.op != c.op || chosen->second.bytes != c.bytes)
    {
        throw std::logic_error(fmt::format("{} #{} on communicator {} starts without NCCL's choice",
                                           CollectiveName(c.op), c.sequence, c.comm->handle));
    }
    const CollectiveChoice made = std::move(chosen->second);
    m_choices.erase(chosen);
    if (!made.choice)
    {
        throw std::invalid_argument(made.refusal);
    }
    nccl::Plan plan = nccl::MakePlan(c.op, ShapeOf(n), c.bytes, m_nccl.For(*c.comm), *made.choice);
    const std::string label = fmt::format("{} {} B on {} ranks", CollectiveName(c.op), c.bytes, n);
    if (m_fold.Folds() && std::all_of(c.comm->ranks.begin(), c.comm->ranks.end(),
                                      [this](int r) { return m_fold.IsLive(r); }))
    {
        // A group inside the live replica: each absent replica runs its own copy at the
        // same instant, on its own GPUs, and its traffic shares the network.
        for (int d = 1; d < m_fold.Replicas(); ++d)
        {
            std::vector<uint32_t> copy;
            copy.reserve(gpus.size());
            for (uint32_t g : gpus)
            {
                copy.push_back(static_cast<uint32_t>(m_fold.InReplica(static_cast<int>(g), d)));
            }
            m_network.StartCollective(
                c.startNs, plan, std::move(copy), [](int64_t) {},
                {order.first < m_fold.WorldSize()
                     ? m_fold.InReplica(static_cast<int>(order.first), d)
                     : order.first,
                 order.second},
                label + fmt::format(" (replica {})", d));
        }
    }
    m_network.StartCollective(
        c.startNs, std::move(plan), std::move(gpus),
        NetworkModel::CompletionFn(
            [this, members = std::move(members), memberIndex = std::move(memberIndex), n,
             startNs = c.startNs,
             root = static_cast<uint32_t>(c.root)](const NetworkModel::Completion& done)
            {
                // Each member ends when its own part does, as NCCL's kernel on its GPU:
                // a broadcast's root before the chain's tail (plan rank p is communicator
                // rank (p + root) mod n; a folded run's absent members release nothing).
                const std::vector<int64_t>& ends = done.rankEndNs.at(0);
                // Folded, absent members arrive at the next collective with their live
                // replica; unfolded, that collective starts when its slowest member arrives.
                // So where members are absent the live ones follow the slowest end.
                const bool absent = members.size() < n;
                const int64_t slowestNs =
                    ends.empty() ? done.endNs : *std::max_element(ends.begin(), ends.end());
                for (std::size_t m = 0; m < members.size(); ++m)
                {
                    const int64_t endNs =
                        absent ? slowestNs : ends.at((memberIndex[m] + n - root % n) % n);
                    const auto& [rank, ticket] = members[m];
                    m_timelines[static_cast<std::size_t>(rank)].CompleteCollective(
                        ticket, InSituEnd(members, startNs, endNs), endNs);
                }
            }),
        order, label);
}

int64_t CollectiveLaunch::InSituEnd(const std::vector<std::pair<int, uint64_t>>& ranks,
                                    int64_t startNs, int64_t aloneEndNs) const
{
    const double rateBeside = m_scenario.gpu.commRateBesideMemoryBound;
    if (!m_scenario.gpu.commInterference || rateBeside >= 1.0)
    {
        return aloneEndNs;
    }
    double share = 0.0;
    for (const auto& [rank, ticket] : ranks)
    {
        share = std::max(share, m_timelines[static_cast<std::size_t>(rank)].MemoryBoundShare(
                                    startNs, aloneEndNs));
    }
    return HbmShare::EndAt(startNs, aloneEndNs, HbmShare::Rate(share, rateBeside));
}

} // namespace phantora
