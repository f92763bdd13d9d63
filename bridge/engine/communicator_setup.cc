#include "engine/communicator_setup.h"

#include "engine/simulation_error.h"

#include <algorithm>
#include <fmt/format.h>

namespace phantora
{

CommunicatorSetup::CommunicatorSetup(CommunicatorRegistry& comms, NcclSettings& nccl, Lanes& lanes)
    : m_comms(comms), m_nccl(nccl), m_lanes(lanes)
{
}

void CommunicatorSetup::OnCommInit(const RequestContext& ctx, const wire::NcclCommInit& m)
{
    PendingWait w;
    w.kind = PendingWait::Kind::CommInit;
    w.call = fmt::format("ncclCommInitRank(nranks {}, rank {})", m.nranks, m.rank);
    m_lanes.Block(ctx, std::move(w));
    m_nccl.RecordCreation(ctx.rank, m.tuning);
    if (auto joined = m_comms.Join(m.id, m.nranks, m.rank, ctx.rank))
    {
        Joined(*joined, ctx.out);
    }
}

bool CommunicatorSetup::ResolveFolded(std::vector<OutgoingReply>& out)
{
    const auto resolved = m_comms.ResolveFolded();
    for (const auto& joined : resolved)
    {
        Joined(joined, out);
    }
    return !resolved.empty();
}

void CommunicatorSetup::Joined(const CommunicatorRegistry::Joined& joined,
                               std::vector<OutgoingReply>& out)
{
    std::vector<std::pair<int, const Communicator*>> members;
    for (int member : joined.waitingRanks)
    {
        members.emplace_back(member, joined.comm);
    }
    m_nccl.Settle(members);
    LeaveTogether(members, out);
}

void CommunicatorSetup::OnCommSplit(const RequestContext& ctx, const wire::NcclCommSplit& m)
{
    const Communicator& parent = m_comms.Get(m.parent);
    PendingWait w;
    w.kind = PendingWait::Kind::CommInit;
    w.call = fmt::format("ncclCommSplit(color {}, key {})", m.color, m.key);
    m_lanes.Block(ctx, std::move(w));
    m_nccl.RecordCreation(ctx.rank, m.tuning);
    if (auto split = m_comms.Split(parent, ctx.rank, m.color, m.key))
    {
        m_nccl.Settle(split->members);
        LeaveTogether(split->members, ctx.out);
    }
}

void CommunicatorSetup::LeaveTogether(
    const std::vector<std::pair<int, const Communicator*>>& members,
    std::vector<OutgoingReply>& out)
{
    // Communicator creation is collective: every member leaves it when the last one
    // has arrived.  Each member's thread that is in the creation call leaves it (one
    // thread per rank creates communicators at a time).
    auto creator = [this](int member) -> std::pair<uint32_t, LaneState*>
    {
        for (auto& [id, lane] : m_lanes.Rank(member).lanes)
        {
            if (lane.phase == LaneState::Phase::Waiting &&
                lane.wait->kind == PendingWait::Kind::CommInit)
            {
                return {id, &lane};
            }
        }
        throw SimulationError(fmt::format("rank {} has no thread creating a communicator", member));
    };
    int64_t at = 0;
    for (const auto& [member, comm] : members)
    {
        at = std::max(at, creator(member).second->wait->callNs);
    }
    for (const auto& [member, comm] : members)
    {
        auto [id, lane] = creator(member);
        lane->clockNs = std::max(lane->clockNs, at);
        RankState& mr = m_lanes.Rank(member);
        mr.clockNs = std::max(mr.clockNs, lane->clockNs);
        wire::CommReady ready{0, lane->clockNs, 0, 0};
        if (comm)
        {
            ready.comm = comm->handle;
            ready.nranks = static_cast<int32_t>(comm->ranks.size());
            ready.rank = m_comms.MemberIndex(*comm, member);
        }
        m_lanes.Answer(member, id, ready, out);
    }
}

} // namespace phantora
