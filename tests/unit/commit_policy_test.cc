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
        : network(scenario), nccl(scenario.nccl), launch(scenario, network, timelines, nccl),
          policy(ranks, comms, launch, network, kLatencyNs, mode, nullptr)
    {
    }

    /// Both ranks' communicator.
    const Communicator& World()
    {
        wire::NcclId id{};
        comms.Join(id, 2, 0, 0);
        return *comms.Join(id, 2, 1, 1)->comm;
    }

    /// \p rank issues its next all-reduce on \p comm at \p clockNs.
    void Issue(const Communicator& comm, int rank, int64_t clockNs)
    {
        std::vector<OutgoingReply> out;
        RequestContext ctx{rank, 0, clockNs, clockNs, 1, out};
        wire::NcclCollective m;
        m.comm = comm.handle;
        m.bytes = 4;
        const uint64_t sequence = launch.NumberCollective(comm.handle, rank);
        launch.EnqueueCollective(ctx, comm, rank, sequence, m, sequence + 1);
    }

    Scenario scenario = TwoGpus();
    std::vector<RankState> ranks = BothSynchronising();
    NetworkModel network;
    std::vector<DeviceTimeline> timelines{DeviceTimeline(kLatencyNs), DeviceTimeline(kLatencyNs)};
    CommunicatorRegistry comms;
    NcclSettings nccl;
    CollectiveLaunch launch;
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

// Rank 0 reads the result of an all-reduce it issued at 100 ns (a .item() of a gradient
// norm); rank 1 has not issued it and waits for its stream from 9000 ns on.  Rank 0 cannot
// have the value before rank 1 issues the all-reduce, so it holds time back from there,
// not from its own clock: bounded at 100 ns, the network could not run rank 1's stream to
// its end, and neither rank would ever go on (Megatron's TP=2 x DP=2 and 8-rank stalls).
TEST(CommitPolicy, AReadOfACollectivesValuesHoldsTimeWhereItsLastMemberCanStillIssueIt)
{
    Fixture f;
    const Communicator& world = f.World();
    f.Issue(world, 0, 100);
    f.ranks[0].lanes[0] = Waiting(PendingWait::Kind::CollectiveValues, 100);
    f.ranks[0].lanes[0].wait->comm = world.handle;
    f.ranks[0].lanes[0].wait->sequence = 0;
    f.ranks[1].lanes[0] = Waiting(PendingWait::Kind::Stream, 9000);
    EXPECT_EQ(f.policy.SendBound(), 9000 + kLatencyNs);
    EXPECT_EQ(f.policy.ValuesResumeBound(world.handle, 0, 100), 9000);

    // Rank 1 resumes at 9500 and issues it: rank 0 resumes there.
    f.ranks[1].lanes[0] = Running(9500);
    f.Issue(world, 1, 9500);
    EXPECT_EQ(f.policy.ValuesResumeBound(world.handle, 0, 100), 9500);
    EXPECT_EQ(f.policy.SendBound(), 9500 + kLatencyNs);
}

// Rank 1 reads the bytes of a receive whose send rank 0 has not issued; rank 0 waits in a
// stream synchronisation whose answer is the network's next completion.  Bounded by rank
// 0's clock at its call, the read held that completion back and neither rank went on
// (TorchTitan's pipeline shape exchange); rank 0 resumes no earlier than the completion.
TEST(CommitPolicy, AReadOfAReceiveHoldsTimeNoEarlierThanTheSendersPendingCompletion)
{
    Fixture f;
    const Communicator& world = f.World();
    std::optional<int64_t> told;
    f.network.StartCollective(0, nccl::MakeRingAllReducePlan(2, 8 << 20), {0, 1},
                              [&](int64_t endNs) { told = endNs; });
    while (f.network.Advance(NetworkModel::kForever))
    {
    }
    ASSERT_NE(f.network.NextCompletion(), nullptr);
    const int64_t endNs = f.network.NextCompletion()->endNs;
    ASSERT_GT(endNs, 300 + kLatencyNs);
    f.ranks[0].lanes[0] = Waiting(PendingWait::Kind::Stream, 200);
    f.ranks[1].lanes[0] = Waiting(PendingWait::Kind::P2PValues, 300);
    f.ranks[1].lanes[0].wait->comm = world.handle;
    f.ranks[1].lanes[0].wait->peer = 0;
    f.ranks[1].lanes[0].wait->sequence = 0;
    EXPECT_EQ(f.policy.P2PValuesResumeBound(1, world.handle, 0, 0, 300), endNs);
    EXPECT_TRUE(f.policy.CommitOne());
    EXPECT_EQ(told, endNs);
}
