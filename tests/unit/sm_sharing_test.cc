#include "device_timeline.h"
#include "sm_sharing.h"

#include <gtest/gtest.h>

using namespace phantora;

namespace
{
constexpr uint64_t kFills = SmSharing::kFillsGpu;
}

TEST(SmSharing, AKernelThatFillsTheGpuRunsOnTheSmsTheCollectiveLeaves)
{
    SmSharing sms(132);
    sms.AddCollective(1, 0, 10'000, 24);
    sms.FinishCollective(1, 10'000);
    // 1000 ns of work at 108/132 of the SMs: 1222.2 ns.
    EXPECT_EQ(sms.KernelEnd(100, 1000, kFills), 100 + 1222);
    EXPECT_EQ(sms.KernelEnd(100, 1000, 132), 100 + 1222);
}

TEST(SmSharing, OnlyTheOverlappedPartIsSlowed)
{
    SmSharing sms(132);
    sms.AddCollective(1, 0, 500, 24);
    // 500 ns at 108/132 do 409.09 ns of work; the other 590.91 run at full speed.
    EXPECT_EQ(sms.KernelEnd(0, 1000, kFills), 1091);
    // Starting after the collective: untouched.
    EXPECT_EQ(sms.KernelEnd(600, 1000, kFills), 1600);
    // Ending before it starts: untouched.
    sms.AddCollective(2, 5000, 6000, 24);
    EXPECT_EQ(sms.KernelEnd(3000, 1000, kFills), 4000);
}

TEST(SmSharing, AKernelWithFewerCtasThanFreeSmsIsNotSlowed)
{
    SmSharing sms(132);
    sms.AddCollective(1, 0, 10'000, 24);
    EXPECT_EQ(sms.KernelEnd(0, 1000, 108), 1000);
    EXPECT_EQ(sms.KernelEnd(0, 1000, 1), 1000);
    // 120 CTAs on 108 free SMs: 0.9 of the speed.
    EXPECT_EQ(sms.KernelEnd(0, 900, 120), 1000);
}

TEST(SmSharing, CollectivesAddUpAndNeverTakeEverySm)
{
    SmSharing sms(132);
    sms.AddCollective(1, 0, 10'000, 24);
    sms.AddCollective(2, 0, 10'000, 24);
    EXPECT_EQ(sms.KernelEnd(0, 840, kFills), 1320); // 84 of 132 SMs
    SmSharing tiny(4);
    tiny.AddCollective(1, 0, 1'000'000, 24);
    EXPECT_EQ(tiny.KernelEnd(0, 100, kFills), 400); // one SM left of four
}

TEST(SmSharing, TheExpectedEndStandsUntilTheNetworkAnswers)
{
    SmSharing sms(132);
    sms.AddCollective(7, 0, 500, 24);
    EXPECT_EQ(sms.KernelEnd(0, 1000, kFills), 1091);
    sms.FinishCollective(7, 2000); // it ran longer than NCCL's estimate
    EXPECT_EQ(sms.KernelEnd(0, 1000, kFills), 1222);
}

TEST(SmSharing, ACollectiveWaitsForTheKernelThatFillsTheGpu)
{
    SmSharing sms(132);
    sms.AddKernel(1, 0, 800, kFills);
    EXPECT_EQ(sms.CollectiveStart(2, 300, 24), 800);
    EXPECT_EQ(sms.CollectiveStart(2, 800, 24), 800); // it has ended
    // Its own stream's kernels are before it anyway; it is not delayed by them here.
    EXPECT_EQ(sms.CollectiveStart(1, 300, 24), 300);
    // A kernel that leaves enough SMs free delays nothing.
    sms.AddKernel(3, 0, 5000, 108);
    EXPECT_EQ(sms.CollectiveStart(2, 900, 24), 900);
    sms.AddKernel(4, 0, 5000, 109);
    EXPECT_EQ(sms.CollectiveStart(2, 900, 24), 5000);
}

TEST(SmSharing, ACollectiveWaitsUntilNoFullKernelRuns)
{
    SmSharing sms(132);
    sms.AddKernel(1, 0, 800, kFills);
    sms.AddKernel(2, 700, 1500, kFills); // starts before the first ends
    EXPECT_EQ(sms.CollectiveStart(3, 100, 16), 1500);
}

TEST(SmSharing, ZeroSmsTurnsTheModelOff)
{
    SmSharing sms(0);
    sms.AddCollective(1, 0, 10'000, 24);
    sms.AddKernel(1, 0, 800, kFills);
    EXPECT_FALSE(sms.Enabled());
    EXPECT_EQ(sms.KernelEnd(0, 1000, kFills), 1000);
    EXPECT_EQ(sms.CollectiveStart(2, 300, 24), 300);
}

TEST(DeviceTimelineSmSharing, ACollectiveStartsAfterTheRunningGemmAndSlowsTheNextOne)
{
    DeviceTimeline tl(0, 132);
    tl.EnqueueTimed(1, 0, 1000, 0, "gemm", kFills); // 0..1000
    int64_t ready = -1;
    tl.EnqueueCollective(
        2, 200, 42, [&](int64_t t) { ready = t; }, "all_reduce", 24, 5000);
    EXPECT_EQ(ready, 1000);                           // its CTAs found SMs when the GEMM ended
    tl.EnqueueTimed(1, 300, 1000, 0, "gemm", kFills); // 1000.. at 108/132
    EXPECT_EQ(tl.StreamTail(1), 2222);
    tl.CompleteCollective(42, 1500);
    // A kernel placed after the network's answer sees the real end.
    tl.EnqueueTimed(1, 300, 1000, 0, "gemm", kFills);
    EXPECT_EQ(tl.StreamTail(1), 3222);
    // Copies do not run on the SMs.
    tl.EnqueueCollective(
        2, 3300, 43, [](int64_t) {}, "all_reduce", 24, 5000);
    tl.EnqueueTimed(1, 3300, 1000, 0, "copy", 0);
    EXPECT_EQ(tl.StreamTail(1), 4300);
}

TEST(DeviceTimelineSmSharing, WithoutSmsTheTimelineIsUnchanged)
{
    DeviceTimeline tl(0);
    tl.EnqueueTimed(1, 0, 1000, 0, "gemm", kFills);
    int64_t ready = -1;
    tl.EnqueueCollective(
        2, 200, 42, [&](int64_t t) { ready = t; }, "all_reduce", 24, 5000);
    EXPECT_EQ(ready, 200);
    tl.EnqueueTimed(1, 300, 1000, 0, "gemm", kFills);
    EXPECT_EQ(tl.StreamTail(1), 2000);
}

TEST(DeviceTimelineSmSharing, AQueuedCollectiveSlowsKernelsFromItsForecastStart)
{
    DeviceTimeline tl(0, 132);
    int64_t first = -1;
    int64_t second = -1;
    tl.EnqueueCollective(
        2, 0, 1, [&](int64_t t) { first = t; }, "all_reduce", 24, 1000);
    tl.EnqueueCollective(
        2, 0, 2, [&](int64_t t) { second = t; }, "all_reduce", 24, 1000);
    EXPECT_EQ(first, 0);
    EXPECT_EQ(second, -1); // queued behind the first
    // A kernel from 2000 on: the first is expected to end at 1000, the second to hold
    // its SMs from 1000 to 2000, and then nothing.
    tl.EnqueueTimed(1, 1500, 1000, 0, "gemm", kFills);
    // 500 ns at 108/132 (409.1 ns of work), then 590.9 at full speed.
    EXPECT_EQ(tl.StreamTail(1), 2591);
    tl.CompleteCollective(1, 1200);
    EXPECT_EQ(second, 1200); // the GEMM placed at 1500 was not running yet
}
