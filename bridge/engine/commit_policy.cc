#include "engine/commit_policy.h"

#include <algorithm>
#include <fmt/format.h>

namespace phantora
{

CommitPolicy::CommitPolicy(const std::vector<RankState>& ranks, NetworkModel& network,
                           int64_t launchLatencyNs, SyncMode mode, TraceRecorder* trace)
    : m_ranks(ranks), m_network(network), m_launchLatencyNs(launchLatencyNs), m_mode(mode),
      m_trace(trace)
{
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
    // A query is answered at its caller's clock, which then runs on from there.
    for (const RankState& r : m_ranks)
    {
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        for (const auto& [id, l] : r.lanes)
        {
            if (&l != except && l.phase == LaneState::Phase::Waiting &&
                (l.wait->kind == PendingWait::Kind::EventQuery ||
                 l.wait->kind == PendingWait::Kind::EventElapsed ||
                 l.wait->kind == PendingWait::Kind::CollectiveValues))
            {
                bound = std::min(bound, l.wait->callNs);
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
