// The commit policy alone: the global virtual time (SendBound) is the earliest instant
// any thread could still send at, plus the launch latency; a thread in a timed host
// wait holds it at its deadline, one in an untimed wait not at all; and a network
// completion is handed on only once that bound has passed its end.
#include "engine/commit_policy.h"

#include <gtest/gtest.h>
#include <optional>
#include <vector>

using namespace phantora;

namespace
{

constexpr int64_t kLatencyNs = 1000;

Scenario TwoGpus()
{
    Scenario s;
    s.name = "commit";
    s.gpu.launchLatencyNs = kLatencyNs;
    s.topology.gpus = 2;
    s.topology.gpusPerNode = 2;
    s.topology.linkBitsPerSecond = 400e9;
    s.topology.linkLatencyNs = 1000;
    s.network.transport = "flow";
    return s;
}

LaneState Running(int64_t clockNs)
{
    LaneState l;
    l.clockNs = clockNs;
    return l;
}

LaneState Waiting(PendingWait::Kind kind, int64_t callNs)
{
    LaneState l;
    l.phase = LaneState::Phase::Waiting;
    l.clockNs = callNs;
    l.wait = PendingWait{};
    l.wait->kind = kind;
    l.wait->callNs = callNs;
    return l;
}

LaneState HostBlocked(int64_t clockNs, int64_t deadlineNs)
{
    LaneState l = Running(clockNs);
    l.phase = LaneState::Phase::HostBlocked;
    l.deadlineNs = deadlineNs;
    return l;
}

/// Two connected ranks whose main threads wait for the engine in a synchronisation.
std::vector<RankState> BothSynchronising()
{
    std::vector<RankState> ranks(2);
    for (auto& r : ranks)
    {
        r.phase = RankPhase::Running;
        r.lanes[0] = Waiting(PendingWait::Kind::Device, 100);
    }
    return ranks;
}

struct Fixture
{
    explicit Fixture(SyncMode mode = SyncMode::Optimistic)
        : network(scenario), policy(ranks, network, kLatencyNs, mode, nullptr)
    {
    }

    Scenario scenario = TwoGpus();
    std::vector<RankState> ranks = BothSynchronising();
    NetworkModel network;
    CommitPolicy policy;
};

} // namespace

TEST(CommitPolicy, ThreadsWaitingForTheEngineHoldNothingBack)
{
    Fixture f;
    EXPECT_EQ(f.policy.Horizon(), NetworkModel::kForever);
    EXPECT_EQ(f.policy.SendBound(), NetworkModel::kForever);
}

TEST(CommitPolicy, ATimedHostWaitBoundsTimeAtItsDeadline)
{
    Fixture f;
    f.ranks[0].lanes[1] = HostBlocked(2000, 5000);
    EXPECT_EQ(f.policy.Horizon(), 5000);
    EXPECT_EQ(f.policy.SendBound(), 5000 + kLatencyNs);
    f.ranks[0].lanes[1].deadlineNs = -1; // only another thread can end it
    EXPECT_EQ(f.policy.SendBound(), NetworkModel::kForever);
}

TEST(CommitPolicy, RunningThreadsAndUntakenWakesHoldTimeAtTheirClocks)
{
    Fixture f;
    f.ranks[1].lanes[2] = Running(7000);
    EXPECT_EQ(f.policy.SendBound(), 7000 + kLatencyNs);
    f.ranks[0].pendingWakes.emplace(1500, 3000); // resumes at 3 us once taken up
    EXPECT_EQ(f.policy.SendBound(), 3000 + kLatencyNs);
    f.ranks.push_back(RankState{}); // not connected yet, at its clock 0
    EXPECT_EQ(f.policy.SendBound(), kLatencyNs);
}

TEST(CommitPolicy, AWaitingQueryBoundsEveryoneButItself)
{
    Fixture f;
    f.ranks[1].lanes[2] = Running(7000);
    f.ranks[0].lanes[1] = Waiting(PendingWait::Kind::EventQuery, 4000);
    const LaneState& query = f.ranks[0].lanes[1];
    EXPECT_EQ(f.policy.SendBound(), 4000 + kLatencyNs);
    EXPECT_EQ(f.policy.SendBound(&query), 7000 + kLatencyNs);
    // An idle network has nothing undecided: the query's instant is settled once
    // nothing but the query itself could still send before it.
    EXPECT_TRUE(f.policy.SettledThrough(4000, query));
    EXPECT_FALSE(f.policy.SettledThrough(8000, query));
}

TEST(CommitPolicy, CommitsACompletionOnlyOnceNoThreadCanSendBeforeItsEnd)
{
    Fixture f;
    std::optional<int64_t> told;
    f.network.StartCollective(0, nccl::MakeRingAllReducePlan(2, 8 << 20), {0, 1},
                              [&](int64_t endNs) { told = endNs; });
    while (f.network.Advance(NetworkModel::kForever))
    {
    }
    ASSERT_NE(f.network.NextCompletion(), nullptr);
    const int64_t endNs = f.network.NextCompletion()->endNs;
    ASSERT_GT(endNs, 2 * kLatencyNs);

    // A thread in a timed host wait could still start something before the end.
    f.ranks[1].lanes[1] = HostBlocked(0, endNs - kLatencyNs - 1);
    EXPECT_FALSE(f.policy.CommitOne());
    EXPECT_FALSE(told);
    EXPECT_EQ(f.policy.CommittedNs(), 0);

    // From its deadline on, nothing it sends starts before the end.
    f.ranks[1].lanes[1].deadlineNs = endNs - kLatencyNs;
    EXPECT_TRUE(f.policy.CommitOne());
    EXPECT_EQ(told, endNs);
    EXPECT_EQ(f.policy.CommittedNs(), endNs);
    EXPECT_FALSE(f.policy.CommitOne()) << "nothing left to commit";
}

TEST(CommitPolicy, OnlyTheConservativeNetworkStopsAtTheBound)
{
    // One network at a time: ns-3's simulator is a process-wide singleton.
    {
        Fixture optimistic(SyncMode::Optimistic);
        optimistic.ranks[0].lanes[1] = Running(3000);
        EXPECT_TRUE(optimistic.policy.Optimistic());
        EXPECT_EQ(optimistic.policy.AdvanceLimit(), NetworkModel::kForever);
    }
    Fixture conservative(SyncMode::Conservative);
    conservative.ranks[0].lanes[1] = Running(3000);
    EXPECT_FALSE(conservative.policy.Optimistic());
    EXPECT_EQ(conservative.policy.AdvanceLimit(), 3000 + kLatencyNs);
}
