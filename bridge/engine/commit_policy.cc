#include "engine/commit_policy.h"

#include <algorithm>
#include <fmt/format.h>

namespace phantora
{

CommitPolicy::CommitPolicy(const std::vector<RankState>& ranks, const CommunicatorRegistry& comms,
                           const CollectiveLaunch& launch, NetworkModel& network,
                           int64_t launchLatencyNs, SyncMode mode, TraceRecorder* trace)
    : m_ranks(ranks), m_comms(comms), m_launch(launch), m_network(network),
      m_launchLatencyNs(launchLatencyNs), m_mode(mode), m_trace(trace)
{
}

int64_t CommitPolicy::IssueBound(int rank) const
{
    const RankState& r = m_ranks[static_cast<std::size_t>(rank)];
    if (r.phase == RankPhase::NotConnected)
    {
        return r.clockNs;
    }
    if (r.phase != RankPhase::Running)
    {
        return NetworkModel::kForever;
    }
    int64_t bound = NetworkModel::kForever;
    for (const auto& [sent, resumeNs] : r.pendingWakes)
    {
        bound = std::min(bound, resumeNs);
    }
    // A thread synchronising with its GPU whose answer is not known yet waits for a network
    // completion (none ends before the next one: more traffic only delays flows) or for
    // another rank to issue its part, which that rank's running thread bounds anyway.
    const NetworkModel::Completion* next = m_network.NextCompletion();
    for (const auto& [id, l] : r.lanes)
    {
        if (l.phase == LaneState::Phase::Waiting && next &&
            (l.wait->kind == PendingWait::Kind::Stream ||
             l.wait->kind == PendingWait::Kind::Device ||
             l.wait->kind == PendingWait::Kind::EventSync))
        {
            bound = std::min(bound, std::max(l.clockNs, next->endNs));
        }
        else if (l.phase == LaneState::Phase::Running || l.phase == LaneState::Phase::Waiting)
        {
            bound = std::min(bound, l.clockNs);
        }
        else if (l.phase == LaneState::Phase::HostBlocked && l.deadlineNs >= 0)
        {
            bound = std::min(bound, l.deadlineNs);
        }
    }
    return bound;
}

int64_t CommitPolicy::ValuesResumeBound(uint64_t comm, uint64_t sequence, int64_t callNs) const
{
    int64_t at = std::max(callNs, m_launch.LastIssueNs(comm, sequence));
    for (int member : m_comms.Get(comm).ranks)
    {
        if (!m_launch.Issued(comm, member, sequence))
        {
            at = std::max(at, IssueBound(member));
        }
    }
    return at;
}

int64_t CommitPolicy::P2PValuesResumeBound(int rank, uint64_t comm, int peer, uint64_t sequence,
                                           int64_t callNs) const
{
    const Communicator& c = m_comms.Get(comm);
    const int me = m_comms.MemberIndex(c, rank);
    if (auto issued = m_launch.SendIssueNs(comm, peer, me, sequence))
    {
        return std::max(callNs, *issued);
    }
    return std::max(callNs, IssueBound(c.ranks[static_cast<std::size_t>(peer)]));
}

int64_t CommitPolicy::Horizon() const
{
    // The earliest instant any thread of any rank could still send something at: a
    // running thread at its clock, a thread in a timed host wait at its deadline, a
    // woken thread that has not said so yet at its waker's clock.  Threads waiting for
    // the bridge, or in a host wait only another thread can end, hold nothing back.
    int64_t horizon = NetworkModel::kForever;
    for (const RankState& r : m_ranks)
    {
        if (r.phase == RankPhase::NotConnected)
        {
            horizon = std::min(horizon, r.clockNs);
        }
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        for (const auto& [sent, resumeNs] : r.pendingWakes)
        {
            horizon = std::min(horizon, resumeNs);
        }
        for (const auto& [id, l] : r.lanes)
        {
            if (l.phase == LaneState::Phase::Running)
            {
                horizon = std::min(horizon, l.clockNs);
            }
            else if (l.phase == LaneState::Phase::HostBlocked && l.deadlineNs >= 0)
            {
                horizon = std::min(horizon, l.deadlineNs);
            }
        }
    }
    return horizon;
}

int64_t CommitPolicy::SendBound(const LaneState* except) const
{
    int64_t bound = Horizon();
    // A query is answered at its caller's clock, which then runs on from there.  A read
    // of a collective's values is answered once every member issued it, and its caller
    // resumes no earlier than the last of them did: bounding it by its own clock instead
    // would hold simulated time back for members that cannot issue the collective before
    // simulated time passes that clock (they wait for their streams), a deadlock.
    for (const RankState& r : m_ranks)
    {
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        for (const auto& [id, l] : r.lanes)
        {
            if (&l == except || l.phase != LaneState::Phase::Waiting)
            {
                continue;
            }
            if (l.wait->kind == PendingWait::Kind::EventQuery ||
                l.wait->kind == PendingWait::Kind::EventElapsed)
            {
                bound = std::min(bound, l.wait->callNs);
            }
            else if (l.wait->kind == PendingWait::Kind::CollectiveValues)
            {
                bound = std::min(bound,
                                 ValuesResumeBound(l.wait->comm, l.wait->sequence, l.wait->callNs));
            }
            else if (l.wait->kind == PendingWait::Kind::P2PValues)
            {
                const auto rank = static_cast<int>(&r - m_ranks.data());
                bound = std::min(bound, P2PValuesResumeBound(rank, l.wait->comm, l.wait->peer,
                                                             l.wait->sequence, l.wait->callNs));
            }
        }
    }
    // Whatever a rank enqueues at its clock starts on the GPU a launch latency later.
    return bound == NetworkModel::kForever ? bound : bound + m_launchLatencyNs;
}

bool CommitPolicy::SettledThrough(int64_t ns, const LaneState& lane) const
{
    return SendBound(&lane) > ns && m_network.UndecidedFromNs() > ns;
}

bool CommitPolicy::CommitOne()
{
    const NetworkModel::Completion* next = m_network.NextCompletion();
    if (!next || next->endNs > SendBound())
    {
        return false;
    }
    m_committedNs = std::max(m_committedNs, next->endNs);
    // Tells the timelines (through the collective's DoneFn), which may start more.
    const NetworkModel::Completion done = m_network.TakeCompletion();
    if (m_trace)
    {
        for (const auto& f : done.flows)
        {
            m_trace->NetworkSpan(
                fmt::format("gpu {} -> gpu {}", f.srcGpu, f.dstGpu),
                fmt::format("{}: {} transfers, {} B", done.label, f.transfers, f.bytes), f.startNs,
                f.endNs);
        }
    }
    return true;
}

int64_t CommitPolicy::AdvanceLimit() const
{
    return m_mode == SyncMode::Optimistic ? NetworkModel::kForever : SendBound();
}

} // namespace phantora
