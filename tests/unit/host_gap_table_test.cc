// The host-time profile's lookups: what a recorded gap is keyed by and how a lookup
// falls back when the simulated program's calls were not all recorded.
#include "host_time/host_gap_table.h"
#include "host_time/host_speed.h"

#include <gtest/gtest.h>

using namespace phantora::host_time;

namespace
{

/// A thread that calls \p labels in a loop \p rounds times, spending gaps[i] after labels[i].
Sequence Loop(const std::vector<std::string>& labels, const std::vector<int64_t>& gaps, int rounds)
{
    Sequence s;
    int64_t pending = -1;
    for (int r = 0; r < rounds; ++r)
    {
        for (std::size_t i = 0; i < labels.size(); ++i)
        {
            s.labels.push_back(labels[i]);
            s.gapBeforeNs.push_back(pending);
            pending = gaps[i];
        }
    }
    return s;
}

Context After(const std::vector<std::string>& labels)
{
    Context c;
    for (const auto& l : labels)
    {
        c.Push(HostLabel::FromText(l));
    }
    return c;
}

} // namespace

TEST(HostLabel, SitesAreComparedWholeThenByModuleThenNotAtAll)
{
    const HostLabel a = HostLabel::FromText("event:record@libtorch_cuda.so+0x10");
    const HostLabel b = HostLabel::FromText("event:record@libtorch_cuda.so+0x20");
    const HostLabel c = HostLabel::FromText("event:record@libtorch_python.so+0x10");
    EXPECT_NE(a.full, b.full);
    EXPECT_EQ(a.module, b.module);
    EXPECT_NE(a.module, c.module);
    EXPECT_EQ(a.bare, c.bare);
    EXPECT_EQ(a.kind, HostLabel::FromText("event:query@x.so+0x1").kind);
    EXPECT_NE(a.kind, HostLabel::FromText("launch:k@x.so+0x1").kind);
    EXPECT_EQ(a.text, "event:record@libtorch_cuda.so+0x10");
}

TEST(HostGapTable, EachGapIsTheMedianOfWhatFollowedTheSameCalls)
{
    // The same kernel launched from two places, followed by different host work.
    const std::vector<std::string> calls = {"launch:k@lib.so+0x1", "launch:k@lib.so+0x2",
                                            "sync:device@lib.so+0x3"};
    Sequence s = Loop(calls, {100, 2000, 50}, 5);
    s.gapBeforeNs[4] = 999999; // one disturbed sample: the median ignores it
    const GapTable t = GapTable::Build({s});
    auto first = t.Lookup(After({"sync:device@lib.so+0x3", "launch:k@lib.so+0x1"}));
    ASSERT_TRUE(first);
    EXPECT_EQ(first->ns, 100);
    EXPECT_EQ(first->source, Source::Context);
    auto second = t.Lookup(After({"launch:k@lib.so+0x1", "launch:k@lib.so+0x2"}));
    ASSERT_TRUE(second);
    EXPECT_EQ(second->ns, 2000);
}

TEST(HostGapTable, UnrecordedCallsFallBackToShorterAndCoarserKeys)
{
    const GapTable t = GapTable::Build(
        {Loop({"launch:a@lib.so+0x1", "event:record@lib.so+0x2", "launch:b@lib.so+0x3"},
              {10, 20, 300}, 4)});
    // Another build of lib.so: the offset moved, the module and the call did not.
    auto moved = t.Lookup(After({"launch:a@lib.so+0x9"}));
    ASSERT_TRUE(moved);
    EXPECT_EQ(moved->source, Source::ModuleContext);
    EXPECT_EQ(moved->ns, 10);
    // From another library altogether: the call alone.
    auto other = t.Lookup(After({"launch:b@other.so+0x3"}));
    ASSERT_TRUE(other);
    EXPECT_EQ(other->source, Source::BareContext);
    EXPECT_EQ(other->ns, 300);
    // A kernel never recorded: other launches' gaps.
    auto kind = t.Lookup(After({"launch:never@lib.so+0x1"}));
    ASSERT_TRUE(kind);
    EXPECT_EQ(kind->source, Source::Kind);
    EXPECT_EQ(kind->ns, 10); // median of launch a's four 10s and launch b's three 300s
    // A call of a kind never recorded: the whole recording's median.
    auto none = t.Lookup(After({"nccl:all_reduce@lib.so+0x1"}));
    ASSERT_TRUE(none);
    EXPECT_EQ(none->source, Source::Global);
    EXPECT_EQ(none->ns, 20);
    // Its expected value: four 10s, four 20s and three 300s, the 300s held to median 20
    // + 3 x 1.4826 x MAD 10 = 64.5.
    const GapTable mean = GapTable::Build(
        {Loop({"launch:a@lib.so+0x1", "event:record@lib.so+0x2", "launch:b@lib.so+0x3"},
              {10, 20, 300}, 4)},
        GapStatistic::Mean);
    EXPECT_EQ(mean.Lookup(After({"nccl:all_reduce@lib.so+0x1"}))->ns, 28);
    // A longer matching context beats a shorter one.
    auto deep =
        t.Lookup(After({"launch:b@lib.so+0x3", "launch:a@lib.so+0x1", "event:record@lib.so+0x2"}));
    ASSERT_TRUE(deep);
    EXPECT_EQ(deep->ns, 20);
    EXPECT_EQ(deep->source, Source::Context);
}

TEST(HostGapTable, AnEmptyTableAnswersNothingAndTheWireFormatRoundTrips)
{
    EXPECT_FALSE(GapTable{}.Lookup(After({"launch:a@x+0x1"})));
    EXPECT_TRUE(GapTable::Parse("").Empty());
    const GapTable t =
        GapTable::Build({Loop({"launch:a@lib.so+0x1", "copy:async@lib.so+0x2"}, {7, 11}, 3)});
    const std::string bytes = t.Serialize();
    EXPECT_EQ(bytes, GapTable::Parse(bytes).Serialize());
    const GapTable back = GapTable::Parse(bytes);
    for (const auto& ctx : {After({"launch:a@lib.so+0x1"}), After({"copy:async@lib.so+0x2"}),
                            After({"memset@q.so+0x0"})})
    {
        EXPECT_EQ(t.Lookup(ctx)->ns, back.Lookup(ctx)->ns);
        EXPECT_EQ(t.Lookup(ctx)->source, back.Lookup(ctx)->source);
    }
    EXPECT_THROW(GapTable::Parse("HGT2\x01"), std::invalid_argument);
    EXPECT_THROW(GapTable::Parse("nope"), std::invalid_argument);
}

TEST(HostGapTable, TheMeanStatisticChargesTheMeanWithOneOffSamplesHeldToThreeSigma)
{
    // Right-skewed, as host gaps are: the median (115) would charge less than the
    // samples' sum; the one-off 100000 (a first step's set-up) counts as median + 3 sigma,
    // sigma = 1.4826 x MAD (15): (100 + 100 + 110 + 120 + 181.7 + 181.7) / 6.
    EXPECT_EQ(ExpectedGap({100, 100, 110, 120, 200, 100000}), 132);
    // Within 3 sigma every sample counts as it is: the plain mean, not the median (16).
    EXPECT_EQ(ExpectedGap({10, 12, 14, 16, 18, 20, 30}), 17);
    EXPECT_EQ(ExpectedGap({7}), 7);
    EXPECT_EQ(ExpectedGap({}), 0);
    // A table built for the mean ([cpu] host_gap = "mean") charges it for a key; the
    // default, the median (115).
    const std::vector<std::string> calls = {"launch:k@lib.so+0x1", "sync:device@lib.so+0x3"};
    Sequence s = Loop(calls, {100, 50}, 6);
    const std::vector<int64_t> after = {100, 100, 110, 120, 200, 100000};
    for (std::size_t r = 0; r < after.size(); ++r)
    {
        s.gapBeforeNs[2 * r + 1] = after[r];
    }
    // (After the launch alone: the first round's launch has no call before it.)
    const Context ctx = After({"launch:k@lib.so+0x1"});
    EXPECT_EQ(GapTable::Build({s}, GapStatistic::Mean).Lookup(ctx)->ns, 132);
    EXPECT_EQ(GapTable::Build({s}).Lookup(ctx)->ns, 115);
    // Calls' own costs too.
    s.callNs.assign(s.labels.size(), -1);
    for (std::size_t r = 0; r < after.size(); ++r)
    {
        s.callNs[2 * r] = after[r];
    }
    const HostLabel launch = HostLabel::FromText("launch:k@lib.so+0x1");
    EXPECT_EQ(GapTable::Build({s}, GapStatistic::Mean).CallCost(launch)->ns, 132);
    EXPECT_EQ(GapTable::Build({s}).CallCost(launch)->ns, 115);
}

TEST(HostSpeed, MeasuresAPositiveTimePerRound)
{
    const double ns = MeasureHostSpeedNs();
    EXPECT_GT(ns, 1.0);
    EXPECT_LT(ns, 1e6);
}

TEST(HostGapTable, ACallsOwnCostIsItsMedianByTheSameKeysAndRoundTrips)
{
    Sequence s =
        Loop({"launch:a@lib.so+0x1", "call:cublasGemmEx@lib.so+0x2", "sync:device@lib.so+0x3"},
             {10, 20, 30}, 3);
    s.callNs = {4000, 9000, -1, 5000, 11000, -1, 6000, 10000, -1};
    const GapTable t = GapTable::Build({s});
    auto launch = t.CallCost(HostLabel::FromText("launch:a@lib.so+0x1"));
    ASSERT_TRUE(launch);
    EXPECT_EQ(launch->ns, 5000);
    EXPECT_EQ(launch->source, Source::Context);
    auto gemm = t.CallCost(HostLabel::FromText("call:cublasGemmEx@other.so+0x9"));
    ASSERT_TRUE(gemm);
    EXPECT_EQ(gemm->ns, 10000);
    EXPECT_EQ(gemm->source, Source::BareContext);
    // Another kernel: the launches' cost; a call that waits kept none.
    EXPECT_EQ(t.CallCost(HostLabel::FromText("launch:b@x.so+0x1"))->source, Source::Kind);
    EXPECT_FALSE(t.CallCost(HostLabel::FromText("sync:device@lib.so+0x3")));
    const GapTable back = GapTable::Parse(t.Serialize());
    EXPECT_EQ(back.CallCost(HostLabel::FromText("launch:a@lib.so+0x1"))->ns, 5000);
}
