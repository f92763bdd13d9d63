// The deadlock check alone: it fires only when no thread of any rank can send anything
// on its own, and its message names each waiting thread, the call it waits in and since
// when, the ranks that are gone, and what only some members reached.
#include "engine/deadlock_report.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace phantora;

namespace
{

LaneState Waiting(std::string call, int64_t sinceNs)
{
    LaneState l;
    l.phase = LaneState::Phase::Waiting;
    l.wait = PendingWait{};
    l.wait->call = std::move(call);
    l.wait->callNs = sinceNs;
    return l;
}

LaneState HostBlocked(int64_t deadlineNs = -1)
{
    LaneState l;
    l.phase = LaneState::Phase::HostBlocked;
    l.deadlineNs = deadlineNs;
    return l;
}

/// Rank 0 waits in a stream synchronisation on thread 0 and has thread 2 in an untimed
/// host wait; rank 1 waits in an all-reduce's result on thread 3; rank 2 has exited.
std::vector<RankState> Stuck()
{
    std::vector<RankState> ranks(3);
    ranks[0].phase = RankPhase::Running;
    ranks[0].lanes[0] = Waiting("cudaStreamSynchronize(stream 4096)", 1500);
    ranks[0].lanes[2] = HostBlocked();
    ranks[1].phase = RankPhase::Running;
    ranks[1].lanes[3] = Waiting("cudaDeviceSynchronize", 2500);
    ranks[2].phase = RankPhase::Exited;
    ranks[2].lastCall = "AllReduce of 64 bytes";
    return ranks;
}

} // namespace

TEST(DeadlockReport, EveryRankWaitingIsADeadlockCandidate)
{
    EXPECT_TRUE(EveryRankWaits(Stuck()));
}

TEST(DeadlockReport, AThreadThatCanStillSendIsNoDeadlock)
{
    auto running = Stuck();
    running[1].lanes[4] = LaneState{}; // runs
    EXPECT_FALSE(EveryRankWaits(running));

    auto timed = Stuck();
    timed[0].lanes[2] = HostBlocked(9000); // wakes on its own at 9 us
    EXPECT_FALSE(EveryRankWaits(timed));

    auto woken = Stuck();
    woken[1].pendingWakes.emplace(100, 200); // a wake not taken up yet
    EXPECT_FALSE(EveryRankWaits(woken));

    auto outside = Stuck();
    outside[1].lanes[0] = HostBlocked(); // polls a socket: another process may wake it
    outside[1].lanes[0].outside = true;
    EXPECT_FALSE(EveryRankWaits(outside));

    auto unborn = Stuck();
    unborn.emplace_back(); // a rank that has not connected yet
    EXPECT_FALSE(EveryRankWaits(unborn));
}

TEST(DeadlockReport, ThreadsOnlyInHostWaitsAreNoDeadlockOfTheEngine)
{
    std::vector<RankState> ranks(1);
    ranks[0].phase = RankPhase::Running;
    ranks[0].lanes[0] = HostBlocked();
    EXPECT_FALSE(EveryRankWaits(ranks)) << "nobody waits for the engine";
}

TEST(DeadlockReport, NamesWhoWaitsForWhat)
{
    const std::string msg =
        DeadlockReport(Stuck(), {"AllReduce #3 on communicator 0x1: rank 1 has not reached it"});
    EXPECT_EQ(msg, "deadlock: every live rank waits and nothing in flight can release it"
                   "\n  rank 0 waits in cudaStreamSynchronize(stream 4096) since 1500 ns"
                   "\n  rank 0 thread 2 is blocked in a host wait"
                   "\n  rank 1 thread 3 waits in cudaDeviceSynchronize since 2500 ns"
                   "\n  rank 2 has exited (last call: AllReduce of 64 bytes)"
                   "\n  AllReduce #3 on communicator 0x1: rank 1 has not reached it");
}

TEST(DeadlockReport, AFinishedRankIsToldApartFromAnExitedOne)
{
    auto ranks = Stuck();
    ranks[2].phase = RankPhase::Finished;
    EXPECT_NE(DeadlockReport(ranks, {}).find("rank 2 has finished (last call: AllReduce"),
              std::string::npos);
}
