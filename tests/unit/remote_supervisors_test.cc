// What the bridge of a served run concludes from phantora-rank's reports: a command
// that ended before its ranks said goodbye, a phantora-rank gone silent, and the cases
// that are no failure (a clean end, goodbyes still in flight, a silent host whose ranks
// are all done).
#include "launch/remote_supervisors.h"

#include <gtest/gtest.h>

using namespace phantora;
using Clock = RemoteSupervisors::Clock;
using std::chrono::seconds;

namespace
{

wire::Watch Report(int pid, int rank = -1)
{
    wire::Watch w;
    w.id = "hostb:" + std::to_string(pid);
    w.host = "hostb";
    w.pid = pid;
    w.rank = rank;
    w.commandPid = pid + 1;
    w.command = "torchrun";
    return w;
}

wire::Watch Exited(wire::Watch w, bool clean, const std::string& how)
{
    w.exited = true;
    w.clean = clean;
    w.exitMessage = how;
    return w;
}

} // namespace

TEST(RemoteSupervisors, ACommandKilledBeforeItsRanksSaidGoodbyeEndsTheRunNamingThem)
{
    RemoteSupervisors s(seconds(10), seconds(2));
    std::vector<RankState> ranks(4);
    const Clock::time_point t0{};
    s.OnWatch(Report(100), "id", "10.0.0.3", t0);
    s.OnRankHello(2, 201, "hostb:100");
    s.OnRankHello(3, 202, "hostb:100");
    ranks[2].saidGoodbye = true;
    s.OnWatch(Exited(Report(100), false, "was killed by signal 9 (Killed)"), "id", "10.0.0.3",
              t0 + seconds(1));
    EXPECT_FALSE(s.Check(ranks, t0 + seconds(2))); // goodbyes may still be on their way
    const auto why = s.Check(ranks, t0 + seconds(4));
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("rank 3 (host hostb [10.0.0.3], pid 202)"), std::string::npos) << *why;
    EXPECT_EQ(why->find("rank 2 "), std::string::npos) << *why;
    EXPECT_NE(why->find("torchrun (pid 101) was killed by signal 9"), std::string::npos) << *why;
}

TEST(RemoteSupervisors, ACleanEndAfterEveryGoodbyeIsNoFailure)
{
    RemoteSupervisors s(seconds(10), seconds(2));
    std::vector<RankState> ranks(2);
    const Clock::time_point t0{};
    s.OnWatch(Report(100, 1), "id", "", t0);
    s.OnRankHello(1, 201, "hostb:100");
    ranks[1].saidGoodbye = true;
    s.OnWatch(Exited(Report(100, 1), true, "exited with status 0"), "id", "", t0);
    EXPECT_FALSE(s.Check(ranks, t0 + seconds(60)));
}

TEST(RemoteSupervisors, ACommandThatFailsBeforeAnyRankConnectsEndsTheRun)
{
    RemoteSupervisors s(seconds(10), seconds(2));
    std::vector<RankState> ranks(2);
    const Clock::time_point t0{};
    s.OnWatch(Exited(Report(100), false, "exited with status 1"), "id", "", t0);
    const auto why = s.Check(ranks, t0 + seconds(3));
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("none connected yet"), std::string::npos) << *why;
    EXPECT_NE(why->find("exited with status 1"), std::string::npos) << *why;
}

TEST(RemoteSupervisors, ASilentPhantoraRankLosesItsUnfinishedRanksOnly)
{
    RemoteSupervisors s(seconds(10), seconds(2));
    std::vector<RankState> ranks(4);
    const Clock::time_point t0{};
    s.OnWatch(Report(100), "a", "10.0.0.2", t0);
    s.OnWatch(Report(300), "b", "10.0.0.3", t0);
    s.OnRankHello(0, 101, "hostb:100");
    s.OnRankHello(1, 301, "hostb:300");
    ranks[0].phase = RankPhase::Exited; // all of the first one's ranks are done
    s.OnWatch(Report(300), "b", "10.0.0.3", t0 + seconds(5));
    EXPECT_FALSE(s.Check(ranks, t0 + seconds(12)));
    const auto why = s.Check(ranks, t0 + seconds(16));
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("rank 1 (host hostb [10.0.0.3], pid 301): lost"), std::string::npos)
        << *why;
}
