// The recorder's attribution of graph-replayed GPU activities to the library call captured
// into their nodes (gpu_profiler/graph_node_attribution.h), fed the events CUPTI reports:
// nodes created during capture, nodes cloned at instantiation, replayed activities.
#include "gpu_profiler/graph_node_attribution.h"

#include <algorithm>
#include <gtest/gtest.h>

using phantora::recorder::GraphNodeAttribution;

namespace
{

std::vector<uint64_t> SpansOf(const GraphNodeAttribution& a, uint64_t call)
{
    std::vector<uint64_t> ns;
    for (const auto& s : a.Samples())
    {
        if (s.call == call)
        {
            ns.push_back(s.ns);
        }
    }
    std::sort(ns.begin(), ns.end());
    return ns;
}

} // namespace

// A captured cuBLAS call (memset node + kernel node), instantiated (clones), replayed twice:
// one sample per replay, from the memset's start to the kernel's end.
TEST(GraphNodeAttribution, ReplaysOfACapturedCallAreItsSamples)
{
    GraphNodeAttribution a;
    a.NodeCreated(10, {.call = 7}); // memset node, created inside call 7
    a.NodeCreated(11, {.call = 7}); // its kernel node
    a.NodeCreated(12, {});          // an elementwise kernel outside any library call
    a.NodeCloned(110, 10);
    a.NodeCloned(111, 11);
    a.NodeCloned(112, 12);
    // Replay 1 (cudaGraphLaunch correlation 500), replay 2 (correlation 600).
    EXPECT_TRUE(a.AddReplayed(110, 500, 1000, 1002));
    EXPECT_TRUE(a.AddReplayed(111, 500, 1003, 1010));
    EXPECT_FALSE(a.AddReplayed(112, 500, 1011, 1020));
    EXPECT_TRUE(a.AddReplayed(111, 600, 2003, 2009)); // out of order: still one span
    EXPECT_TRUE(a.AddReplayed(110, 600, 2000, 2001));
    EXPECT_EQ(SpansOf(a, 7), (std::vector<uint64_t>{9, 10}));
    EXPECT_EQ(a.Samples().size(), 2u);
    EXPECT_EQ(a.AttributedActivities(), 4u);
    EXPECT_TRUE(a.Captured(7));
    EXPECT_FALSE(a.Captured(8));
}

// Two calls captured into one graph stay apart within a replay.
TEST(GraphNodeAttribution, CallsInOneReplayStayApart)
{
    GraphNodeAttribution a;
    a.NodeCreated(1, {.call = 3});
    a.NodeCreated(2, {.call = 4});
    a.NodeCloned(21, 1);
    a.NodeCloned(22, 2);
    a.AddReplayed(21, 9, 100, 130);
    a.AddReplayed(22, 9, 140, 200);
    EXPECT_EQ(SpansOf(a, 3), (std::vector<uint64_t>{30}));
    EXPECT_EQ(SpansOf(a, 4), (std::vector<uint64_t>{60}));
}

// A graph cloned, then instantiated: the copy of a copy keeps the origin; the original
// nodes (an activity naming one directly) keep it too.
TEST(GraphNodeAttribution, ChainsOfClonesKeepTheOrigin)
{
    GraphNodeAttribution a;
    a.NodeCreated(1, {.call = 5, .launchArgs = 0});
    a.NodeCloned(2, 1);
    a.NodeCloned(3, 2);
    EXPECT_EQ(a.OriginOf(3).call, 5u);
    EXPECT_EQ(a.OriginOf(1).call, 5u);
    EXPECT_TRUE(a.AddReplayed(1, 1, 0, 4));
    EXPECT_EQ(SpansOf(a, 5), (std::vector<uint64_t>{4}));
}

// A plain kernel launch tagged with argument facts keeps them through the clone, but is
// no library call: its replays stay plain kernels (the caller keys them with the facts).
TEST(GraphNodeAttribution, LaunchArgumentFactsFollowTheNode)
{
    GraphNodeAttribution a;
    a.NodeCreated(1, {.call = 0, .launchArgs = 42});
    a.NodeCloned(2, 1);
    EXPECT_EQ(a.OriginOf(2).launchArgs, 42u);
    EXPECT_EQ(a.OriginOf(2).call, 0u);
    EXPECT_FALSE(a.AddReplayed(2, 1, 0, 4));
    EXPECT_TRUE(a.Samples().empty());
    EXPECT_FALSE(a.Captured(0));
}

// Unknown nodes and clones of unknown nodes attribute nothing.
TEST(GraphNodeAttribution, UnknownNodesAttributeNothing)
{
    GraphNodeAttribution a;
    a.NodeCloned(2, 1);
    EXPECT_EQ(a.OriginOf(2).call, 0u);
    EXPECT_FALSE(a.AddReplayed(2, 1, 0, 4));
    a.NodeCreated(5, {});
    EXPECT_FALSE(a.AddReplayed(5, 1, 0, 4));
    EXPECT_EQ(a.AttributedActivities(), 0u);
}

// Instantiation may report an executable graph's copy as created (outside any op) as well
// as cloned, in either order: the copy keeps the captured call.
TEST(GraphNodeAttribution, CopyReportedAsCreatedKeepsItsOrigin)
{
    GraphNodeAttribution a;
    a.NodeCreated(1, {.call = 9});
    a.NodeCloned(2, 1);
    a.NodeCreated(2, {}); // after the clone event
    a.NodeCreated(3, {}); // before it
    a.NodeCloned(3, 1);
    EXPECT_TRUE(a.AddReplayed(2, 1, 0, 4));
    EXPECT_TRUE(a.AddReplayed(3, 2, 10, 16));
    EXPECT_EQ(SpansOf(a, 9), (std::vector<uint64_t>{4, 6}));
}
