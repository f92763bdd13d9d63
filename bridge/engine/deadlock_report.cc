#include "engine/deadlock_report.h"

#include <fmt/format.h>

namespace phantora
{

bool EveryRankWaits(const std::vector<RankState>& ranks)
{
    bool anyWaiting = false;
    for (const RankState& r : ranks)
    {
        if (r.phase == RankPhase::NotConnected)
        {
            return false; // it may still send what the others wait for
        }
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        if (!r.pendingWakes.empty())
        {
            return false;
        }
        for (const auto& [id, l] : r.lanes)
        {
            if (l.phase == LaneState::Phase::Running ||
                (l.phase == LaneState::Phase::HostBlocked && (l.deadlineNs >= 0 || l.outside)))
            {
                return false;
            }
            anyWaiting = anyWaiting || l.phase == LaneState::Phase::Waiting;
        }
    }
    return anyWaiting;
}

std::string DeadlockReport(const std::vector<RankState>& ranks,
                           const std::vector<std::string>& open)
{
    std::string msg = "deadlock: every live rank waits and nothing in flight can release it";
    for (std::size_t rank = 0; rank < ranks.size(); ++rank)
    {
        const RankState& r = ranks[rank];
        if (r.phase == RankPhase::Running)
        {
            for (const auto& [id, l] : r.lanes)
            {
                if (l.phase == LaneState::Phase::Waiting)
                {
                    msg += fmt::format("\n  rank {}{} waits in {} since {} ns", rank,
                                       id == 0 ? std::string() : fmt::format(" thread {}", id),
                                       l.wait->call, l.wait->callNs);
                }
                else if (l.phase == LaneState::Phase::HostBlocked)
                {
                    msg += fmt::format("\n  rank {} thread {} is blocked in a host wait", rank, id);
                }
            }
        }
        else if (r.phase != RankPhase::Folded)
        {
            msg += fmt::format("\n  rank {} has {} (last call: {})", rank,
                               r.phase == RankPhase::Exited ? "exited" : "finished", r.lastCall);
        }
    }
    for (const auto& s : open)
    {
        msg += "\n  " + s;
    }
    return msg;
}

namespace
{

const char* PhaseName(LaneState::Phase p)
{
    switch (p)
    {
    case LaneState::Phase::Running:
        return "running";
    case LaneState::Phase::Waiting:
        return "waits for the bridge";
    case LaneState::Phase::HostBlocked:
        return "host-blocked";
    case LaneState::Phase::Gone:
        return "gone";
    }
    return "?";
}

} // namespace

std::string LaneStateReport(const std::vector<RankState>& ranks)
{
    std::string msg;
    for (std::size_t rank = 0; rank < ranks.size(); ++rank)
    {
        const RankState& r = ranks[rank];
        msg += fmt::format("rank {}: {}, clock {} ns, last call {}\n", rank, RankPhaseName(r.phase),
                           r.clockNs, r.lastCall);
        for (const auto& [sent, resumeNs] : r.pendingWakes)
        {
            msg += fmt::format("  untaken wake given at {} ns, resumes at {} ns\n", sent, resumeNs);
        }
        for (const auto& [id, l] : r.lanes)
        {
            if (l.phase == LaneState::Phase::Gone)
            {
                continue;
            }
            msg += fmt::format("  thread {}: {}, clock {} ns", id, PhaseName(l.phase), l.clockNs);
            if (l.phase == LaneState::Phase::HostBlocked && l.deadlineNs >= 0)
            {
                msg += fmt::format(", deadline {} ns", l.deadlineNs);
            }
            if (l.phase == LaneState::Phase::HostBlocked && l.outside)
            {
                msg += ", waits on a network socket (another process)";
            }
            if (l.phase == LaneState::Phase::Waiting && l.wait)
            {
                msg += fmt::format(", in {} since {} ns", l.wait->call, l.wait->callNs);
            }
            msg += "\n";
        }
    }
    return msg;
}

} // namespace phantora
