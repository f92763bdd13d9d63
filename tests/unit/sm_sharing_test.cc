#include "gpu_model/device_timeline.h"
#include "gpu_model/sm_sharing.h"

#include <gtest/gtest.h>
#include <vector>

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

TEST(SmSharing, APersistentKernelWaitsForTheSmsItLacks)
{
    constexpr uint64_t kPersistent = SmSharing::kPersistent;
    SmSharing sms(132);
    sms.AddCollective(1, 0, 10'000, 24);
    // The collective holds its SMs throughout: the 24 CTAs left over start when the first
    // 108 are done, so the kernel takes two of its durations (the fluid model: 1.22).
    EXPECT_EQ(sms.KernelEnd(100, 1000, kPersistent), 100 + 2000);
    // The collective ends 300 ns into the kernel: the last CTAs start then.
    EXPECT_EQ(sms.KernelEnd(9'700, 1000, kPersistent), 10'000 + 1000);
    // Started after it: untouched; a collective that starts later does not stretch it.
    EXPECT_EQ(sms.KernelEnd(10'000, 1000, kPersistent), 11'000);
    sms.AddCollective(2, 20'500, 30'000, 24);
    EXPECT_EQ(sms.KernelEnd(20'000, 1000, kPersistent), 21'000);
    // More than half the SMs held: three rounds.
    SmSharing busy(132);
    busy.AddCollective(1, 0, 100'000, 80);
    EXPECT_EQ(busy.KernelEnd(0, 1000, kPersistent), 3000);
}

TEST(SmSharing, APersistentKernelStartsItsLastCtasWhenEveryCollectiveIsDone)
{
    SmSharing sms(132);
    sms.AddCollective(1, 0, 400, 24);
    sms.AddCollective(2, 200, 700, 16);
    // Some SMs stay held until 700: the kernel's last CTAs start there.
    EXPECT_EQ(sms.KernelEnd(100, 1000, SmSharing::kPersistent), 1700);
}

TEST(SmSharing, KernelsPlacedBeforeACollectiveWasKnownAreChargedWhenItIs)
{
    SmSharing sms(132);
    // The host placed three kernels on stream 7 (a persistent GEMM, one that fills the GPU,
    // then a small one after a gap) before collective 1 on stream 9 became known.
    sms.AddKernel(7, 0, 1000, SmSharing::kPersistent);
    sms.AddKernel(7, 1000, 2000, kFills);
    sms.AddKernel(7, 2500, 2600, 4);
    sms.AddCollective(1, 0, 1500, 24);
    // A kernel placed once it was known was timed with it already: not charged again.
    sms.AddKernel(8, 0, 2000, kFills);
    sms.FinishCollective(1, 1500);
    const auto moved = sms.Reflow(1, 9);
    ASSERT_EQ(moved.size(), 1U);
    // The GEMM started with the collective: its last 24 CTAs wait for the first 108 to
    // finish (at 1000, before the collective's end), so it ends at 2000.  The next kernel
    // follows it, after the collective, unslowed: 2000 to 3000.  The small kernel, which
    // waited for its launch until 2500, now starts when that one ends: 3000 to 3100.
    EXPECT_EQ(moved.at(7), std::make_pair(int64_t{2600}, int64_t{3100}));
    // Reflowed once only.
    EXPECT_TRUE(sms.Reflow(1, 9).empty());
    // Beside a collective that holds more than half the SMs for long, three rounds.
    SmSharing busy(132);
    busy.AddKernel(7, 0, 1000, SmSharing::kPersistent);
    busy.AddCollective(1, 0, 100'000, 80);
    busy.FinishCollective(1, 100'000);
    EXPECT_EQ(busy.Reflow(1, 9).at(7), std::make_pair(int64_t{1000}, int64_t{3000}));
}

TEST(SmSharing, AReflowMovesTheRestOfTheStreamBack)
{
    SmSharing sms(132);
    sms.AddKernel(7, 0, 1000, kFills);
    sms.AddKernel(7, 1000, 2000, kFills);
    sms.AddCollective(1, 0, 2000, 24);
    sms.FinishCollective(1, 2000);
    // The first kernel wholly beside it: 1000 x 132/108 = 1222; the second from 1222 to
    // 2000 at 108/132 of its speed (636 ns of its work), the other 364 ns after: 2363.
    EXPECT_EQ(sms.Reflow(1, 9).at(7), std::make_pair(int64_t{2000}, int64_t{2363}));
}

TEST(SmSharing, AReflowChargesWhatPlacingTheKernelBesideTheCollectiveWouldHave)
{
    // Kernels that straddle the collective's start or end, or lie inside it: charged the
    // same whether placed before the collective was known (Reflow) or after (KernelEnd),
    // so the simulated time does not depend on which came first.
    const std::vector<std::pair<int64_t, int64_t>> spans{
        {0, 3000}, {1500, 2500}, {2500, 6000}, {0, 8000}};
    for (const auto& [start, end] : spans)
    {
        SmSharing before(132);
        before.AddKernel(7, start, end, kFills);
        before.AddCollective(1, 1000, 5000, 24);
        before.FinishCollective(1, 5000);
        const int64_t reflowed = before.Reflow(1, 9).at(7).second;

        SmSharing after(132);
        after.AddCollective(1, 1000, 5000, 24);
        after.FinishCollective(1, 5000);
        EXPECT_NEAR(reflowed, after.KernelEnd(start, end - start, kFills), 1)
            << "kernel from " << start << " to " << end;
    }
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

TEST(SmSharing, ACollectiveWaitsUntilNoFullKernelThatRanBeforeItRuns)
{
    SmSharing sms(132);
    sms.AddKernel(1, 0, 800, kFills);
    sms.AddKernel(2, 50, 1500, kFills); // running too when the collective is ready
    EXPECT_EQ(sms.CollectiveStart(3, 100, 16), 1500);
}

TEST(SmSharing, KernelsThatStartAfterTheCollectiveIsReadyComeAfterIt)
{
    // A back-to-back GEMM stream: the collective waits for the GEMM running when it became
    // launchable, and its CTAs are dispatched before the next GEMM's.
    SmSharing sms(132);
    for (int64_t i = 0; i < 5; ++i)
    {
        sms.AddKernel(1, i * 800, (i + 1) * 800, SmSharing::kPersistent);
    }
    EXPECT_EQ(sms.CollectiveStart(2, 300, 24), 800);
    EXPECT_EQ(sms.CollectiveStart(2, 1700, 24), 2400);
    // Another stream's kernel that starts while the first runs, after the collective was
    // ready, does not hold it back either.
    sms.AddKernel(3, 700, 1500, kFills);
    EXPECT_EQ(sms.CollectiveStart(2, 300, 24), 800);
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
