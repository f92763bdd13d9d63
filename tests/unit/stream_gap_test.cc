// The stream gap beside streams blocked on events, through the engine: a wait the host
// issues after the ops it blocks beside charges them, unless the rank's process runs its
// streams through one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1).
#include "scripted_ranks.h"

#include <gtest/gtest.h>

using namespace phantora;

namespace
{

Scenario OneGpu()
{
    Scenario s = test::EngineScenario("gap", 1, 0);
    s.gpu.streamGapNs = 1000;
    s.gpu.streamGapBesideBlockedNs = 5000;
    s.kernels.durationsNs["long_kernel"] = 1'000'000;
    s.kernels.durationsNs["tiny_kernel"] = 10'000;
    return s;
}

struct GapRun
{
    int64_t endNs;
    int64_t blockedGapNs;
};

/// Ten tiny kernels queued on stream 4; then streams 2 and 3 wait for a record behind a
/// long kernel on stream 1, so both sit blocked while the tiny kernels run.  Returns when
/// stream 4's work ended.
GapRun TinyKernelsBesideTwoBlockedStreams(int32_t hardwareQueues)
{
    test::ScriptedRanks r(OneGpu(), 1, SyncMode::Conservative);
    auto send = [&r](wire::Request body)
    {
        r.Send(0, 0, std::move(body));
        r.Progress();
    };
    wire::Hello hello = test::HelloOf(0, 1);
    hello.hardwareQueues = hardwareQueues;
    send(hello);
    send(wire::KernelLaunch{1, "long_kernel", {132, 1, 1}, {256, 1, 1}, 0, ""});
    for (int i = 0; i < 10; ++i)
    {
        send(wire::KernelLaunch{4, "tiny_kernel", {132, 1, 1}, {256, 1, 1}, 0, ""});
    }
    send(wire::EventRecord{1, 7});
    send(wire::StreamWaitEvent{2, 7});
    send(wire::StreamWaitEvent{3, 7});
    wire::Synchronize sync;
    sync.stream = 4;
    send(sync);
    EXPECT_EQ(r.resumes[0].size(), 1U);
    const GapRun run{r.resumes[0].empty() ? 0 : r.resumes[0].back(),
                     r.Engine().Timeline(0).BlockedGapNs()};
    send(wire::Goodbye{});
    return run;
}

} // namespace

TEST(StreamGapEngine, TwoStreamsBlockedBesideQueuedKernelsLengthenTheirGaps)
{
    const GapRun defaultQueues = TinyKernelsBesideTwoBlockedStreams(0);
    const GapRun oneQueue = TinyKernelsBesideTwoBlockedStreams(1);
    // ten kernels of 10 us, each followed by the 1 us gap
    EXPECT_EQ(oneQueue.endNs, 10 * 10'000 + 10 * 1000);
    EXPECT_EQ(oneQueue.blockedGapNs, 0);
    // the nine that followed another inside the block pay 5 us more each
    EXPECT_EQ(defaultQueues.blockedGapNs, 9 * 5000);
    EXPECT_EQ(defaultQueues.endNs, oneQueue.endNs + 9 * 5000);
}
