// A collective beside memory-bound kernels (hbm_share.h): the share arithmetic, and the
// engine stretching an all-reduce beside a framework kernel but not beside a GEMM.
#include "engine/simulation_engine.h"
#include "gpu_model/hbm_share.h"
#include "scripted_ranks.h"

#include <gtest/gtest.h>
#include <string>

using namespace phantora;

TEST(HbmShare, OverlappingSpansCountOnceAndOnlyInsideTheWindow)
{
    HbmShare h;
    h.Add(0, 400);
    h.Add(300, 600); // overlaps the first: [0, 600) in all
    h.Add(900, 1500);
    h.Add(200, 200); // empty: ignored
    // [100, 1100): 500 of [100, 600) and 200 of [900, 1100).
    EXPECT_DOUBLE_EQ(h.Share(100, 1100), 0.7);
    EXPECT_DOUBLE_EQ(h.Share(600, 900), 0.0);
    EXPECT_DOUBLE_EQ(h.Share(1000, 1000), 0.0);
}

TEST(HbmShare, SpansAreForgottenByAgeNotByCountAlone)
{
    HbmShare h;
    h.Add(0, 1000);
    // Many short kernels placed after it within 50 ms: the first is still known.
    for (int i = 0; i < 20000; ++i)
    {
        h.Add(2000 + i * 100, 2050 + i * 100);
    }
    EXPECT_DOUBLE_EQ(h.Share(0, 1000), 1.0);
    // Once later work starts far enough past it (and enough is remembered), it goes.
    for (int i = 0; i < 9000; ++i)
    {
        h.Add(60'000'000 + i * 100, 60'000'050 + i * 100);
    }
    EXPECT_DOUBLE_EQ(h.Share(0, 1000), 0.0);
}

TEST(HbmShare, TheRateFallsWithTheShareToTheRateBesideMemoryBoundWork)
{
    EXPECT_DOUBLE_EQ(HbmShare::Rate(0.0, 0.44), 1.0);
    EXPECT_DOUBLE_EQ(HbmShare::Rate(1.0, 0.44), 0.44);
    EXPECT_DOUBLE_EQ(HbmShare::Rate(0.5, 0.44), 0.72);
    EXPECT_DOUBLE_EQ(HbmShare::Rate(1.0, 1.0), 1.0);
    // 100 ns of network time at half speed take 200.
    EXPECT_EQ(HbmShare::EndAt(1000, 1100, 0.5), 1200);
    EXPECT_EQ(HbmShare::EndAt(1000, 1100, 1.0), 1100);
}

TEST(DeviceTimelineHbm, OnlyMemoryBoundKernelsCountAndTheSmsAreFreedWhereTold)
{
    DeviceTimeline tl(0, 132);
    tl.EnqueueTimed(1, 0, 1000, 0, "add", 4096, true);
    tl.EnqueueTimed(1, 0, 1000, 0, "gemm", SmSharing::kPersistent, false);
    EXPECT_DOUBLE_EQ(tl.MemoryBoundShare(0, 2000), 0.5);

    // A collective from 2000 whose network end is 3000, which memory sharing moves to
    // 4000: its stream ends at 4000, but a kernel from 3500 runs on every SM at full speed.
    int64_t ready = -1;
    tl.EnqueueCollective(
        2, 2000, 7, [&](int64_t t) { ready = t; }, "all_reduce", 24, 1000);
    ASSERT_EQ(ready, 2000);
    tl.CompleteCollective(7, 4000, 3000);
    EXPECT_EQ(tl.StreamTail(2), 4000);
    EXPECT_EQ(tl.CollectiveNetworkNs(), 1000);
    EXPECT_EQ(tl.CollectiveInSituNs(), 2000);
    tl.EnqueueTimed(3, 3500, 1000, 0, "k", SmSharing::kFillsGpu);
    EXPECT_EQ(tl.StreamTail(3), 4500);
}

namespace
{

Scenario TwoGpus(double rateBeside)
{
    Scenario s = test::EngineScenario("hbm", 2, 0);
    s.gpu.commRateBesideMemoryBound = rateBeside;
    s.kernels.defaultNs = 20'000'000; // longer than the all-reduce: beside it throughout
    return s;
}

/// Both ranks launch \p kernel (8 CTAs: it leaves the collective its SMs) on stream 1,
/// then all-reduce 64 MiB on stream 2 and wait for stream 2: the all-reduce's end.
int64_t AllReduceEndBeside(const std::string& kernel, double rateBeside)
{
    const Scenario s = TwoGpus(rateBeside);
    test::ScriptedRanks r(s, 2, SyncMode::Conservative);
    for (int rank = 0; rank < 2; ++rank)
    {
        r.SendAndProgress(rank, 0, test::HelloOf(rank, 2));
    }
    for (int rank = 0; rank < 2; ++rank)
    {
        r.SendAndProgress(rank, 0, test::CommInit(1, rank, 2));
    }
    for (int rank = 0; rank < 2; ++rank)
    {
        r.SendAndProgress(rank, 1000, wire::KernelLaunch{1, kernel, {8, 1, 1}, {256, 1, 1}, 0, ""});
        wire::NcclCollective ar;
        ar.comm = r.CommOf(rank);
        ar.op = wire::CollectiveOp::AllReduce;
        ar.bytes = 64 << 20;
        ar.stream = 2;
        r.SendAndProgress(rank, 2000, ar);
        wire::Synchronize sync;
        sync.stream = 2;
        r.SendAndProgress(rank, 3000, sync);
    }
    r.GoodbyeAfterLastResume(2);
    EXPECT_EQ(r.resumes[0].size(), 1U);
    EXPECT_EQ(r.resumes[1].size(), 1U);
    return r.resumes[0].empty() ? 0 : r.resumes[0].back();
}

} // namespace

TEST(HbmShareEngine, AnAllReduceBesideAFrameworkKernelTakesLongerThanBesideAGemm)
{
    const int64_t start = 2000;
    const int64_t alone = AllReduceEndBeside("vectorized_elementwise_kernel", 1.0) - start;
    const int64_t besideGemm = AllReduceEndBeside("sm90_xmma_gemm_bf16bf16_kernel", 0.44) - start;
    const int64_t besideAdd = AllReduceEndBeside("vectorized_elementwise_kernel", 0.44) - start;
    ASSERT_GT(alone, 100'000); // 64 MiB over 400 Gb/s: hundreds of microseconds
    EXPECT_EQ(besideGemm, alone);
    // The elementwise kernel covers the whole window: the collective runs at 0.44.
    EXPECT_NEAR(static_cast<double>(besideAdd) / static_cast<double>(alone), 1.0 / 0.44, 0.01);
}
