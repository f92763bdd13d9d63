#include "gpu_model/device_timeline.h"

#include <gtest/gtest.h>

using namespace phantora;

TEST(DeviceTimeline, OpsOnOneStreamRunBackToBack)
{
    DeviceTimeline tl(5);
    tl.EnqueueTimed(1, 100, 50);  // starts 105, ends 155
    tl.EnqueueTimed(1, 110, 20);  // waits for the first: 155..175
    tl.EnqueueTimed(1, 1000, 10); // stream idle: 1005..1015
    EXPECT_EQ(tl.StreamTail(1), 1015);
    EXPECT_EQ(tl.BusyNs(), 80);
    EXPECT_EQ(tl.TimedOps(), 3U);
}

TEST(DeviceTimeline, StreamsAreIndependentAndTheDeviceWaitsForAll)
{
    DeviceTimeline tl(0);
    tl.EnqueueTimed(1, 0, 100);
    tl.EnqueueTimed(2, 0, 300);
    EXPECT_EQ(tl.StreamTail(1), 100);
    EXPECT_EQ(tl.StreamTail(2), 300);
    EXPECT_EQ(tl.DeviceTail(), 300);
    EXPECT_EQ(tl.StreamTail(99), 0); // never used
}

TEST(DeviceTimeline, NotBeforeDelaysTheStart)
{
    DeviceTimeline tl(0);
    tl.EnqueueTimed(0, 10, 5, 400);
    EXPECT_EQ(tl.StreamTail(0), 405);
}

TEST(DeviceTimeline, CollectiveHoldsItsStreamUntilTheNetworkAnswers)
{
    DeviceTimeline tl(4);
    tl.EnqueueTimed(1, 0, 100); // 4..104
    int64_t ready = -1;
    tl.EnqueueCollective(1, 10, 77, [&](int64_t t) { ready = t; });
    EXPECT_EQ(ready, 104);      // after the kernel, not at enqueue + latency (14)
    tl.EnqueueTimed(1, 20, 30); // queued behind the collective
    tl.EnqueueTimed(2, 20, 30); // another stream is not held
    EXPECT_FALSE(tl.StreamTail(1).has_value());
    EXPECT_FALSE(tl.DeviceTail().has_value());
    EXPECT_EQ(tl.StreamTail(2), 54);
    tl.CompleteCollective(77, 500);
    EXPECT_EQ(tl.StreamTail(1), 530);
    EXPECT_EQ(tl.DeviceTail(), 530);
    EXPECT_EQ(tl.Collectives(), 1U);
}

TEST(DeviceTimeline, ASecondCollectiveBecomesReadyWhenTheFirstEnds)
{
    DeviceTimeline tl(1);
    std::vector<int64_t> ready;
    tl.EnqueueCollective(3, 0, 1, [&](int64_t t) { ready.push_back(t); });
    tl.EnqueueCollective(3, 0, 2, [&](int64_t t) { ready.push_back(t); });
    ASSERT_EQ(ready.size(), 1U);
    tl.CompleteCollective(1, 250);
    ASSERT_EQ(ready.size(), 2U);
    EXPECT_EQ(ready[1], 250);
    EXPECT_THROW(tl.CompleteCollective(1, 300), std::logic_error);
}

TEST(DeviceTimeline, ARecordCompletesWithTheWorkBeforeIt)
{
    DeviceTimeline tl(5);
    tl.EnqueueRecord(1, 0, 100); // idle stream: at enqueue + latency
    EXPECT_EQ(tl.RecordTime(100), 5);
    tl.EnqueueTimed(1, 0, 50); // 5..55
    tl.EnqueueRecord(1, 10, 101);
    EXPECT_EQ(tl.RecordTime(101), 55);
    EXPECT_EQ(tl.RecordTime(999), 0); // never recorded: complete
}

TEST(DeviceTimeline, AStreamWaitingOnARecordStartsAfterIt)
{
    DeviceTimeline tl(0);
    tl.EnqueueTimed(1, 0, 300);
    tl.EnqueueRecord(1, 0, 7); // at 300
    tl.EnqueueWait(2, 7);
    tl.EnqueueTimed(2, 0, 10); // 300..310, not 0..10
    EXPECT_EQ(tl.StreamTail(2), 310);
}

TEST(DeviceTimeline, AWaitOnARecordBehindACollectiveHoldsTheStreamUntilTheNetworkAnswers)
{
    DeviceTimeline tl(0);
    int64_t ready = -1;
    tl.EnqueueCollective(1, 0, 42, [&](int64_t t) { ready = t; });
    tl.EnqueueRecord(1, 0, 8);
    EXPECT_FALSE(tl.RecordTime(8).has_value());
    tl.EnqueueWait(2, 8);
    tl.EnqueueTimed(2, 0, 20);
    EXPECT_FALSE(tl.StreamTail(2).has_value());
    tl.CompleteCollective(42, 1000);
    EXPECT_EQ(tl.RecordTime(8), 1000);
    EXPECT_EQ(tl.StreamTail(2), 1020);
    EXPECT_EQ(tl.DeviceTail(), 1020);
}

TEST(DeviceTimeline, TheLegacyStreamWaitsForBlockingStreamsAndTheyForIt)
{
    DeviceTimeline tl(0);
    const uint64_t blocking = 0x1000;
    const uint64_t nonBlocking = 0x1010 | 0x8;
    tl.EnqueueTimed(blocking, 0, 100);    // 0..100
    tl.EnqueueTimed(nonBlocking, 0, 500); // 0..500, ignored by the legacy stream
    tl.EnqueueTimed(0, 0, 10);            // legacy: after the blocking stream, 100..110
    EXPECT_EQ(tl.StreamTail(0), 110);
    tl.EnqueueTimed(blocking, 0, 5); // after the legacy op: 110..115
    EXPECT_EQ(tl.StreamTail(blocking), 115);
    tl.EnqueueTimed(nonBlocking, 0, 5); // only its own stream: 500..505
    EXPECT_EQ(tl.StreamTail(nonBlocking), 505);
}

TEST(DeviceTimeline, WithoutLegacyWorkStreamsAreIndependent)
{
    DeviceTimeline tl(0);
    tl.EnqueueTimed(0x1000, 0, 100);
    tl.EnqueueTimed(0x1010, 0, 30);
    EXPECT_EQ(tl.StreamTail(0x1010), 30);
}

TEST(DeviceTimeline, ComputeAndCollectiveSpansGiveTheTimeShares)
{
    DeviceTimeline tl(0);
    tl.EnqueueCollective(1, 100, 5, [](int64_t) {}); // runs 100..400
    tl.EnqueueTimed(2, 0, 50);                       // 0..50: compute alone
    tl.EnqueueTimed(2, 300, 200);                    // 300..500: overlaps the collective's end
    tl.CompleteCollective(5, 400);
    EXPECT_EQ(tl.ComputeSpans().TotalNs(), 250);
    EXPECT_EQ(tl.CollectiveSpans().TotalNs(), 300);
    EXPECT_EQ(tl.ComputeSpans().OverlapNs(tl.CollectiveSpans()), 100);
}

TEST(DeviceTimeline, TheStreamGapSeparatesQueuedOpsButNotOpsTheHostIssuedLate)
{
    DeviceTimeline tl(5, 0, StreamGap{2});
    std::vector<std::pair<int64_t, int64_t>> ran;
    tl.SetObserver([&](uint64_t, const std::string&, int64_t s, int64_t e)
                   { ran.emplace_back(s, e); });
    tl.EnqueueTimed(1, 100, 50);  // 105..155
    tl.EnqueueTimed(1, 110, 20);  // queued: 157..177, the gap after the first
    tl.EnqueueTimed(1, 1000, 10); // the host was late: 1005..1015, its latency covers the gap
    ASSERT_EQ(ran.size(), 3U);
    EXPECT_EQ(ran[1], std::make_pair(int64_t{157}, int64_t{177}));
    EXPECT_EQ(ran[2], std::make_pair(int64_t{1005}, int64_t{1015}));
    EXPECT_EQ(tl.BusyNs(), 80); // the gaps are idle time, not work
    int64_t ready = -1;
    tl.EnqueueCollective(1, 1000, 9, [&](int64_t t) { ready = t; });
    EXPECT_EQ(ready, 1017);
    tl.EnqueueTimed(1, 1000, 10);
    tl.CompleteCollective(9, 1200);
    ASSERT_EQ(ran.size(), 5U);
    EXPECT_EQ(ran[3], std::make_pair(int64_t{1017}, int64_t{1200})); // the collective
    EXPECT_EQ(ran[4], std::make_pair(int64_t{1202}, int64_t{1212})); // the gap after it too
}

TEST(DeviceTimeline, AStreamGapOfNothingKeepsOpsBackToBack)
{
    DeviceTimeline gapless(5);
    DeviceTimeline gapped(5, 0, StreamGap{3});
    for (DeviceTimeline* tl : {&gapless, &gapped})
    {
        for (int i = 0; i < 10; ++i)
        {
            tl->EnqueueTimed(1, 0, 100);
        }
    }
    EXPECT_EQ(gapless.StreamTail(1), 5 + 10 * 100);
    // Nine gaps between the ten ops, and the one after the last holds the stream too.
    EXPECT_EQ(gapped.StreamTail(1), 5 + 10 * 100 + 10 * 3);
}

// The front end serves streams blocked on events between two ops of a running stream: from
// two such streams up, the gap grows (stream_gap.py on one H100: 1.0 us with none or one
// waiting, 2.4-2.6 us with two to five).
TEST(DeviceTimeline, TwoStreamsBlockedOnEventsLengthenTheGap)
{
    const StreamGap gap{2, 10};
    for (int blocked : {1, 2})
    {
        DeviceTimeline tl(0, 0, gap);
        // an all-gather the network has not ended, and a record behind it
        tl.EnqueueCollective(5, 0, 77, [](int64_t) {});
        tl.EnqueueRecord(5, 0, 500);
        for (int i = 0; i < blocked; ++i)
        {
            tl.EnqueueWait(10 + i, 500, 0); // blocked from 0 until the network answers
            EXPECT_FALSE(tl.StreamTail(10 + i).has_value());
        }
        tl.EnqueueRecord(1, 0, 999); // a record first: the first op follows a record
        for (int i = 0; i < 4; ++i)
        {
            tl.EnqueueTimed(1, 0, 100);
        }
        EXPECT_EQ(tl.BlockedStreamsBeside(1, 50), blocked);
        // the first op starts at 0 after the record; three follow it back to back
        EXPECT_EQ(tl.StreamTail(1), 4 * 100 + 4 * 2 + (blocked >= 2 ? 3 * 10 : 0)) << blocked;
        EXPECT_EQ(tl.BlockedGapNs(), blocked >= 2 ? 30 : 0);
    }
}

// The host issues a wait after the ops the GPU runs while it blocks: those ops pay when
// the wait is placed, and their stream's later work moves back.
TEST(DeviceTimeline, AWaitPlacedLaterChargesTheOpsItBlockedBeside)
{
    DeviceTimeline tl(0, 0, StreamGap{0, 10});
    for (int i = 0; i < 5; ++i)
    {
        tl.EnqueueTimed(1, 0, 100); // 0..100, 100..200, ... 400..500
    }
    EXPECT_EQ(tl.StreamTail(1), 500);
    tl.EnqueueRecord(1, 0, 7); // at 500
    tl.EnqueueWait(2, 7, 0);   // stream 2 blocked 0..500
    EXPECT_EQ(tl.StreamTail(1), 500) << "one blocked stream is not enough";
    tl.EnqueueWait(3, 7, 0); // stream 3 too: the four ops that followed another pay
    EXPECT_EQ(tl.StreamTail(1), 540);
    EXPECT_EQ(tl.BlockedGapNs(), 40);
    tl.EnqueueWait(4, 7, 0); // a third changes nothing: they were charged once
    EXPECT_EQ(tl.StreamTail(1), 540);
}

TEST(DeviceTimeline, AGraphNodeIsFollowedByTheGraphNodeGapInsteadOfTheStreamGap)
{
    DeviceTimeline tl(5, 0, StreamGap{1000, 0, 300});
    // Three nodes of a replayed graph, all enqueued at once: each waits only the graph
    // node gap after the one before it.
    tl.EnqueueTimed(1, 0, 100, 0, "a", 0, false, true); // 5..105, tail 405
    tl.EnqueueTimed(1, 0, 100, 0, "b", 0, false, true); // 405..505, tail 805
    tl.EnqueueTimed(1, 0, 100, 0, "c", 0, false, true); // 805..905, tail 1205
    EXPECT_EQ(tl.StreamTail(1), 1205);
    // The same ops issued directly: the stream gap.
    tl.EnqueueTimed(2, 0, 100);
    tl.EnqueueTimed(2, 0, 100);
    tl.EnqueueTimed(2, 0, 100);
    EXPECT_EQ(tl.StreamTail(2), 5 + 3 * (100 + 1000));
}
