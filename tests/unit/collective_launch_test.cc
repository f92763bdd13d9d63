// NCCL's choice for a collective through the engine: made once, from the NCCL_* variables
// the ranks created the communicator with, when the collective is enqueued, and carried to
// the plan it runs with; a choice NCCL refuses ends the run when the collective starts.
#include "nccl/config.h"
#include "nccl/environment.h"
#include "nccl_bench.h"
#include "scripted_ranks.h"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

using namespace phantora;

namespace
{

constexpr int64_t kStartNs = 2000;

Scenario TwoGpus()
{
    Scenario s = test::EngineScenario("launch", 2, 0);
    s.kernels.defaultNs = 1000;
    return s;
}

/// Both ranks of a communicator created with \p env call \p op over \p bytes on stream 2 at
/// kStartNs and wait for it; returns rank 0's resume (the collective's end).
int64_t CollectiveEnd(const Scenario& s, const nccl::Environment& env, wire::CollectiveOp op,
                      uint64_t bytes)
{
    test::ScriptedRanks r(s, 2, SyncMode::Conservative);
    for (int rank = 0; rank < 2; ++rank)
    {
        r.SendAndProgress(rank, 0, test::HelloOf(rank, 2));
    }
    for (int rank = 0; rank < 2; ++rank)
    {
        wire::NcclCommInit init = test::CommInit(1, rank, 2);
        init.tuning = env;
        r.SendAndProgress(rank, 0, init);
    }
    for (int rank = 0; rank < 2; ++rank)
    {
        wire::NcclCollective m;
        m.comm = r.CommOf(rank);
        m.op = op;
        m.bytes = bytes;
        m.stream = 2;
        r.SendAndProgress(rank, kStartNs, m);
        wire::Synchronize sync;
        sync.stream = 2;
        r.SendAndProgress(rank, kStartNs + 1000, sync);
    }
    r.GoodbyeAfterLastResume(2);
    EXPECT_EQ(r.resumes[0].size(), 1U);
    return r.resumes[0].empty() ? 0 : r.resumes[0].back();
}

/// The NCCL model's time for \p bytes of all-reduce on the two GPUs run alone, with \p s's
/// [nccl] table and \p env applied (phantora-nccl-tests' path), in ns.
double ModelNs(Scenario s, const nccl::Environment& env, uint64_t bytes)
{
    s.nccl = nccl::WithEnvironment(s.nccl, env);
    return BenchCollective(s, nccl::CollectiveKind::AllReduce, 2, bytes).timeUs * 1e3;
}

} // namespace

TEST(CollectiveLaunch, TheRanksForcedProtocolAndChannelsReachThePlan)
{
    const Scenario s = TwoGpus();
    const uint64_t bytes = 8 << 20;
    const nccl::Environment forced{"Ring", "LL", "", "1"};
    const auto op = wire::CollectiveOp::AllReduce;
    const int64_t automatic = CollectiveEnd(s, {}, op, bytes) - kStartNs;
    const int64_t chosen = CollectiveEnd(s, forced, op, bytes) - kStartNs;
    // The variables made the difference: LL on one channel is far slower than NCCL's choice.
    ASSERT_GT(ModelNs(s, forced, bytes), 2.0 * ModelNs(s, {}, bytes));
    EXPECT_GT(chosen, 2 * automatic);
    // The collective ran the plan of the forced choice: the model's time for it.
    EXPECT_NEAR(static_cast<double>(chosen), ModelNs(s, forced, bytes),
                0.01 * ModelNs(s, forced, bytes));
    EXPECT_NEAR(static_cast<double>(automatic), ModelNs(s, {}, bytes),
                0.01 * ModelNs(s, {}, bytes));
    // The same settings from the scenario's [nccl] table give the same end.
    Scenario table = s;
    table.nccl.algorithm = "ring";
    table.nccl.protocol = "ll";
    table.nccl.maxChannels = 1;
    EXPECT_EQ(CollectiveEnd(table, {}, op, bytes) - kStartNs, chosen);
}

TEST(CollectiveLaunch, AChoiceNcclRefusesEndsTheRunWhenTheCollectiveStarts)
{
    // NCCL_ALGO=Tree is a valid spec (the communicator is created), but NCCL 2.28 has no
    // tree all-gather: the all-gather has no algorithm, and NCCL refuses the call.
    test::ScriptedRanks r(TwoGpus(), 2, SyncMode::Conservative);
    for (int rank = 0; rank < 2; ++rank)
    {
        r.Send(rank, 0, test::HelloOf(rank, 2));
    }
    for (int rank = 0; rank < 2; ++rank)
    {
        wire::NcclCommInit init = test::CommInit(1, rank, 2);
        init.tuning = {"Tree", "", "", ""};
        r.Send(rank, 0, init);
    }
    r.Progress();
    auto allGather = [&r](int rank)
    {
        wire::NcclCollective m;
        m.comm = r.CommOf(rank);
        m.op = wire::CollectiveOp::AllGather;
        m.bytes = 1 << 20;
        m.stream = 2;
        return m;
    };
    // Enqueued by one member: it holds no SMs and nothing fails yet.
    ASSERT_NO_THROW({
        r.Send(0, kStartNs, allGather(0));
        r.Progress();
    });
    std::string error;
    try
    {
        r.Send(1, kStartNs, allGather(1));
        r.Progress();
    }
    catch (const std::invalid_argument& e)
    {
        error = e.what();
    }
    EXPECT_NE(error.find("no algorithm/protocol available for all_gather"), std::string::npos)
        << "'" << error << "'";
    EXPECT_NE(error.find("NCCL_ALGO 'Tree'"), std::string::npos) << error;
}
