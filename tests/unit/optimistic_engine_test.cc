// The engine with ranks whose messages arrive late: a collective that starts in the
// network's past is replayed, and every answer the ranks get, and the trace, are the
// ones the conservative engine gives when nothing arrives late.
#include "engine/simulation_engine.h"
#include "scripted_ranks.h"

#include <gtest/gtest.h>
#include <map>
#include <string>
#include <vector>

using namespace phantora;
using phantora::test::CommInit;
using phantora::test::HelloOf;
using Ranks = phantora::test::ScriptedRanks;

namespace
{

Scenario ThreeGpus(const std::string& transport)
{
    Scenario s = phantora::test::EngineScenario("engine", 3, 3000);
    s.network.transport = transport;
    s.kernels.defaultNs = 1000;
    return s;
}

wire::NcclCollective AllReduce(uint64_t comm, uint64_t stream)
{
    wire::NcclCollective m;
    m.comm = comm;
    m.op = wire::CollectiveOp::AllReduce;
    m.bytes = 8 << 20;
    m.stream = stream;
    return m;
}

wire::Synchronize Device()
{
    wire::Synchronize m;
    m.wholeDevice = true;
    return m;
}

struct Outcome
{
    std::map<int, std::vector<int64_t>> resumes;
    std::string trace;
    NetworkModel::Counters stats;
};

/// Ranks 0 and 1 all-reduce on one communicator, ranks 1 and 2 on another (so the two
/// share rank 1's link), rank 2 starting at \p lateNs.  With \p rank2Late its messages
/// only arrive after the bridge has run the first all-reduce.
Outcome RunScript(const std::string& transport, SyncMode mode, bool rank2Late, int64_t lateNs)
{
    const Scenario s = ThreeGpus(transport);
    Ranks r(s, 3, mode);
    for (int rank = 0; rank < 3; ++rank)
    {
        r.Send(rank, 0, HelloOf(rank, 3));
    }
    r.Send(0, 0, CommInit(1, 0, 2));
    r.Send(1, 0, CommInit(1, 1, 2));
    r.Send(1, 0, CommInit(2, 0, 2));
    r.Send(2, 0, CommInit(2, 1, 2));
    r.Progress();

    r.Send(0, 1000, wire::KernelLaunch{1, "k", {}, {}, 0, ""});
    r.Send(0, 2000, AllReduce(r.CommOf(0), 1));
    r.Send(0, 3000, Device());
    r.Send(1, 2000, AllReduce(r.CommOf(0), 1));
    r.Send(1, 2500, AllReduce(r.CommOf(2), 2));
    r.Send(1, 3000, Device());
    if (rank2Late)
    {
        r.Progress(); // the network runs the first all-reduce ahead, alone
    }
    r.Send(2, lateNs, AllReduce(r.CommOf(2), 2));
    r.Send(2, lateNs + 1000, Device());
    r.Progress();
    // A released rank runs on and could still start something until it says goodbye,
    // so the others' answers may wait for that.
    std::vector<bool> gone(3, false);
    for (int round = 0; round < 3; ++round)
    {
        for (int rank = 0; rank < 3; ++rank)
        {
            if (!gone[static_cast<std::size_t>(rank)] && !r.resumes[rank].empty())
            {
                gone[static_cast<std::size_t>(rank)] = true;
                r.Send(rank, r.resumes[rank].back(), wire::Goodbye{0});
            }
        }
        r.Progress();
    }
    for (int rank = 0; rank < 3; ++rank)
    {
        EXPECT_EQ(r.resumes[rank].size(), 1U) << "rank " << rank << " was not answered";
    }
    return {r.resumes, r.Trace(), r.Engine().Network().Stats()};
}

class EngineReplay : public testing::TestWithParam<std::string>
{
};

} // namespace

TEST_P(EngineReplay, LateRanksGiveTheTimelineOfRanksOnTime)
{
    const Outcome onTime = RunScript(GetParam(), SyncMode::Conservative, false, 30000);
    const Outcome late = RunScript(GetParam(), SyncMode::Optimistic, true, 30000);
    ASSERT_EQ(onTime.resumes.size(), 3U);
    EXPECT_EQ(late.resumes, onTime.resumes);
    EXPECT_TRUE(late.trace == onTime.trace) << "traces differ";
    EXPECT_EQ(onTime.stats.restores, 0U);
    EXPECT_GE(late.stats.pastEvents, 1U);
    EXPECT_GE(late.stats.restores, 1U);
    EXPECT_GE(late.stats.replayedCollectives, 1U);

    // The replay mattered: with the second all-reduce out of the way, rank 0 ends earlier.
    const Outcome apart = RunScript(GetParam(), SyncMode::Optimistic, true, 10000000);
    EXPECT_LT(apart.resumes.at(0).back(), onTime.resumes.at(0).back());
}

TEST_P(EngineReplay, OptimisticAndConservativeAgreeWhenNothingIsLate)
{
    const Outcome a = RunScript(GetParam(), SyncMode::Conservative, false, 30000);
    const Outcome b = RunScript(GetParam(), SyncMode::Optimistic, false, 30000);
    EXPECT_EQ(a.resumes, b.resumes);
    EXPECT_TRUE(a.trace == b.trace) << "traces differ";
    EXPECT_NE(b.trace.find("\"network\""), std::string::npos) << "no network tracks";
    EXPECT_NE(b.trace.find("gpu 1 -> gpu 2"), std::string::npos);
}

TEST_P(EngineReplay, AQueryIsAnsweredAtItsCallersClockOnceNothingCanChangeIt)
{
    const Scenario s = ThreeGpus(GetParam());
    Ranks r(s, 3, SyncMode::Optimistic);
    for (int rank = 0; rank < 2; ++rank)
    {
        r.Send(rank, 0, HelloOf(rank, 3));
        r.Send(rank, 0, CommInit(1, rank, 2));
    }
    r.Send(2, 0, HelloOf(2, 3));
    r.Send(2, 0, wire::Goodbye{0});
    r.Progress();
    r.Send(0, 1000, AllReduce(r.CommOf(0), 1));
    r.Send(0, 1500, wire::EventRecord{1, 7});
    r.Send(0, 10000, wire::EventWait{7, true});
    r.Progress();
    // Rank 1 could still start something that changes when the all-reduce ends.
    EXPECT_TRUE(r.queries[0].empty());
    r.Send(1, 1000, AllReduce(r.CommOf(1), 1));
    r.Send(1, 2000, Device());
    r.Progress();
    // The all-reduce takes far longer than 10 us: not done at the caller's clock.
    ASSERT_EQ(r.queries[0], std::vector<bool>{false});
    // Rank 0 runs on from its clock, so it holds the all-reduce's end back until it waits.
    EXPECT_TRUE(r.resumes[1].empty());
    r.Send(0, 10000, wire::EventWait{7, false});
    r.Progress();
    ASSERT_EQ(r.resumes[0].size(), 1U);
    ASSERT_EQ(r.resumes[1].size(), 1U);
    EXPECT_GT(r.resumes[1][0], 100000);
    r.Send(0, r.resumes[0][0], wire::EventWait{7, true});
    r.Progress();
    EXPECT_EQ(r.queries[0], (std::vector<bool>{false, true}));
}

INSTANTIATE_TEST_SUITE_P(Transports, EngineReplay, testing::Values("flow", "packet"));
