// The flow level's max-min solver alone: no simulator, no topology, just resources and
// flows.
#include "max-min-fair-share.h"

#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using ns3::MaxMinFairShare;

namespace
{

std::vector<MaxMinFairShare::RateChange> Recompute(MaxMinFairShare& solver)
{
    std::vector<MaxMinFairShare::RateChange> changed;
    EXPECT_TRUE(solver.Recompute(changed));
    return changed;
}

} // namespace

TEST(MaxMinFairShare, TwoFlowsOnOneBottleneckGetHalfEach)
{
    MaxMinFairShare solver;
    solver.SetResources({10.0});
    const std::vector<uint32_t> path{0};
    const uint32_t a = solver.AddFlow(path);
    const uint32_t b = solver.AddFlow(path);
    EXPECT_EQ(solver.GetRate(a), 0.0) << "no rate before the recomputation";
    const auto changed = Recompute(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 5.0);
    EXPECT_DOUBLE_EQ(solver.GetRate(b), 5.0);
    ASSERT_EQ(changed.size(), 2U) << "both new flows got a rate";
    EXPECT_EQ(changed[0].oldRate, 0.0);
    EXPECT_EQ(solver.GetNFlowsOn(0), 2U);
    EXPECT_EQ(solver.GetNActiveFlows(), 2U);
}

TEST(MaxMinFairShare, AFlowLimitedElsewhereLeavesTheRestToTheOther)
{
    MaxMinFairShare solver;
    solver.SetResources({10.0, 2.0});
    const uint32_t limited = solver.AddFlow(std::vector<uint32_t>{0, 1});
    const uint32_t free = solver.AddFlow(std::vector<uint32_t>{0});
    Recompute(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(limited), 2.0) << "bottlenecked on resource 1";
    EXPECT_DOUBLE_EQ(solver.GetRate(free), 8.0) << "what the limited flow leaves on 0";
    EXPECT_LT(solver.CheckMaxMinFair(), 1e-12);
}

TEST(MaxMinFairShare, ADepartureHandsItsShareToTheOthers)
{
    MaxMinFairShare solver;
    solver.SetResources({10.0, 2.0});
    const uint32_t limited = solver.AddFlow(std::vector<uint32_t>{0, 1});
    const uint32_t free = solver.AddFlow(std::vector<uint32_t>{0});
    Recompute(solver);
    solver.RemoveFlow(limited);
    const auto changed = Recompute(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(free), 10.0);
    ASSERT_EQ(changed.size(), 1U) << "only the remaining flow moved";
    EXPECT_EQ(changed[0].flow, free);
    EXPECT_DOUBLE_EQ(changed[0].oldRate, 8.0);
    EXPECT_EQ(solver.GetNActiveFlows(), 1U);
    // The freed id is reused by the next flow.
    EXPECT_EQ(solver.AddFlow(std::vector<uint32_t>{1}), limited);
    Recompute(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(limited), 2.0);
    EXPECT_DOUBLE_EQ(solver.GetRate(free), 10.0) << "resource 1 is not on its path";
}

TEST(MaxMinFairShare, NothingToRecomputeLeavesTheRatesAlone)
{
    MaxMinFairShare solver;
    solver.SetResources({4.0});
    const uint32_t a = solver.AddFlow(std::vector<uint32_t>{0});
    Recompute(solver);
    std::vector<MaxMinFairShare::RateChange> changed;
    EXPECT_FALSE(solver.Recompute(changed));
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 4.0);
}

TEST(MaxMinFairShare, ParkingLotGivesEveryFlowHalf)
{
    // a crosses both links, b and c one each: every link is shared by two flows.
    MaxMinFairShare solver;
    solver.SetResources({1.0, 1.0});
    const uint32_t a = solver.AddFlow(std::vector<uint32_t>{0, 1});
    const uint32_t b = solver.AddFlow(std::vector<uint32_t>{0});
    const uint32_t c = solver.AddFlow(std::vector<uint32_t>{1});
    Recompute(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 0.5);
    EXPECT_DOUBLE_EQ(solver.GetRate(b), 0.5);
    EXPECT_DOUBLE_EQ(solver.GetRate(c), 0.5);
}

TEST(MaxMinFairShare, AnAliasTakesNoPartButCountsItsFlows)
{
    // Resource 1 always carries what 0 carries and is faster: only 0 can bind.
    MaxMinFairShare solver;
    solver.SetResources({3.0, 5.0});
    solver.SetAlias(1, 0);
    EXPECT_TRUE(solver.IsAlias(1));
    EXPECT_EQ(solver.ResolveAlias(1), 0U);
    const uint32_t a = solver.AddFlow(std::vector<uint32_t>{0, 1});
    Recompute(solver);
    EXPECT_DOUBLE_EQ(solver.GetRate(a), 3.0);
    EXPECT_EQ(solver.GetNFlowsOn(1), 1U);
}

TEST(MaxMinFairShare, IncrementalRatesStayTheGlobalMaxMinAllocation)
{
    // Batches of arrivals and departures on random paths; after each, the incremental
    // result must equal the textbook allocation computed from scratch.
    std::mt19937 rng(7);
    const uint32_t nRes = 24;
    std::vector<double> caps(nRes);
    for (double& c : caps)
    {
        c = 1.0 + static_cast<double>(rng() % 8);
    }
    MaxMinFairShare solver;
    solver.SetResources(caps);
    std::vector<uint32_t> active;
    std::vector<MaxMinFairShare::RateChange> changed;
    for (int round = 0; round < 200; ++round)
    {
        const uint32_t arrivals = rng() % 4;
        for (uint32_t i = 0; i < arrivals; ++i)
        {
            std::vector<uint32_t> path;
            const uint32_t hops = 1 + rng() % 5;
            for (uint32_t h = 0; h < hops; ++h)
            {
                const uint32_t r = rng() % nRes;
                if (std::find(path.begin(), path.end(), r) == path.end())
                {
                    path.push_back(r);
                }
            }
            active.push_back(solver.AddFlow(path));
        }
        const uint32_t departures = active.empty() ? 0 : rng() % 3;
        for (uint32_t i = 0; i < departures && !active.empty(); ++i)
        {
            const size_t k = rng() % active.size();
            solver.RemoveFlow(active[k]);
            active.erase(active.begin() + static_cast<std::ptrdiff_t>(k));
        }
        solver.Recompute(changed);
        ASSERT_EQ(solver.GetNActiveFlows(), active.size());
        if (!active.empty())
        {
            ASSERT_LT(solver.CheckMaxMinFair(), 1e-9) << "round " << round;
        }
        for (uint32_t id : active)
        {
            ASSERT_GT(solver.GetRate(id), 0.0) << "every active flow has a rate";
        }
    }
}
