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
                (l.phase == LaneState::Phase::HostBlocked && l.deadlineNs >= 0))
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
        else
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

} // namespace phantora
