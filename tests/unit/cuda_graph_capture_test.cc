// Stream capture into a graph (fork/join through events, dependencies, unjoined forks,
// capture modes), child graphs inlined at instantiation, and the replay plan that turns a
// graph back into stream work.
#include "graph_replay_plan.h"
#include "stream_capture.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

wire::KernelLaunch Kernel(uint64_t stream, const char* name)
{
    wire::KernelLaunch k;
    k.stream = stream;
    k.name = name;
    return k;
}

const char* NameOf(const CUgraphNode_st* n)
{
    return std::get<wire::KernelLaunch>(n->op).name.c_str();
}

constexpr uint64_t kMain = 0x1008;
constexpr uint64_t kSide = 0x1018;
int g_event = 0; // its address stands for a cudaEvent_t
int g_join = 0;

} // namespace

TEST(StreamCapture, ForkAndJoinThroughEventsBuildTheDag)
{
    StreamCapture& c = StreamCapture::Get();
    ASSERT_EQ(c.Begin(kMain, CaptureMode::Global), CaptureError::None);
    EXPECT_TRUE(c.Capture(Kernel(kMain, "a")));
    EXPECT_TRUE(c.RecordEvent(&g_event, kMain));
    EXPECT_FALSE(c.Capturing(kSide));
    EXPECT_EQ(c.WaitEvent(kSide, &g_event), StreamCapture::WaitOutcome::Captured);
    EXPECT_TRUE(c.Capturing(kSide)); // joined the capture
    EXPECT_TRUE(c.Capture(Kernel(kSide, "b")));
    EXPECT_TRUE(c.Capture(Kernel(kMain, "c")));
    EXPECT_TRUE(c.RecordEvent(&g_join, kSide));
    EXPECT_EQ(c.WaitEvent(kMain, &g_join), StreamCapture::WaitOutcome::Captured);
    EXPECT_TRUE(c.Capture(Kernel(kMain, "d")));
    EXPECT_EQ(c.Query(kMain).status, CaptureStatus::Active);
    StreamCapture::Ended ended = c.End(kMain);
    ASSERT_EQ(ended.error, CaptureError::None);
    EXPECT_FALSE(c.Capturing(kSide)); // the capture ended for every stream that joined
    const CUgraph_st& g = *ended.graph;
    ASSERT_EQ(g.nodes.size(), 4u);
    // a -> b, a -> c, {b, c} -> d
    EXPECT_EQ(g.nodes[1]->deps, std::vector<CUgraphNode_st*>{g.nodes[0].get()});
    EXPECT_EQ(g.nodes[2]->deps, std::vector<CUgraphNode_st*>{g.nodes[0].get()});
    EXPECT_EQ(g.nodes[3]->deps.size(), 2u);

    const ReplayPlan plan = PlanReplay(g);
    EXPECT_EQ(plan.slots, 2u); // the side branch on a stream of the graph's own
    std::vector<std::string> onSlot0;
    for (const ReplayStep& s : plan.steps)
    {
        if (s.kind == ReplayStep::Kind::Node && s.slot == 0)
        {
            onSlot0.push_back(NameOf(s.node));
        }
    }
    // b was captured before c: it follows a on the launch stream, c takes the other slot
    // (either way the edges are kept).
    EXPECT_EQ(onSlot0, (std::vector<std::string>{"a", "b", "d"}));
    // c waits for a's record and d for c's; the launch stream's last step joins slot 1.
    int waits = 0;
    for (const ReplayStep& s : plan.steps)
    {
        waits += s.kind == ReplayStep::Kind::Wait ? 1 : 0;
    }
    EXPECT_EQ(waits, 3);
    EXPECT_EQ(plan.steps.back().kind, ReplayStep::Kind::Wait);
    EXPECT_EQ(plan.steps.back().slot, 0u);
}

TEST(StreamCapture, AForkNeverJoinedBackEndsTheCaptureUnjoined)
{
    StreamCapture& c = StreamCapture::Get();
    ASSERT_EQ(c.Begin(kMain, CaptureMode::Global), CaptureError::None);
    EXPECT_TRUE(c.RecordEvent(&g_event, kMain));
    EXPECT_EQ(c.WaitEvent(kSide, &g_event), StreamCapture::WaitOutcome::Captured);
    EXPECT_TRUE(c.Capture(Kernel(kSide, "lost")));
    EXPECT_EQ(c.End(kSide).error, CaptureError::NotOrigin);
    EXPECT_EQ(c.End(kMain).error, CaptureError::Unjoined);
    EXPECT_FALSE(StreamCapture::AnyActive());
}

TEST(StreamCapture, WaitingOnAnEventFromOutsideTheCaptureIsIsolation)
{
    StreamCapture& c = StreamCapture::Get();
    EXPECT_FALSE(c.RecordEvent(&g_event, kSide)); // recorded outside any capture
    ASSERT_EQ(c.Begin(kMain, CaptureMode::Global), CaptureError::None);
    EXPECT_EQ(c.WaitEvent(kMain, &g_event), StreamCapture::WaitOutcome::Isolation);
    EXPECT_EQ(c.WaitEvent(kSide, &g_event), StreamCapture::WaitOutcome::NotCaptured);
    EXPECT_EQ(c.End(kMain).error, CaptureError::None);
    EXPECT_EQ(c.Begin(0, CaptureMode::Global), CaptureError::LegacyStream);
}

TEST(StreamCapture, ModesDecideWhoMayNotMakeUnsafeCalls)
{
    StreamCapture& c = StreamCapture::Get();
    ASSERT_EQ(c.Begin(kMain, CaptureMode::ThreadLocal), CaptureError::None);
    // Another thread (global mode) is free beside a thread-local capture.
    bool other = true;
    std::thread([&] { other = c.ForbidsUnsafeCall("cudaMalloc"); }).join();
    EXPECT_FALSE(other);
    // The capturing thread in relaxed mode may (PyTorch's allocator around cudaMalloc).
    EXPECT_EQ(StreamCapture::ExchangeThreadMode(CaptureMode::Relaxed), CaptureMode::Global);
    EXPECT_FALSE(c.ForbidsUnsafeCall("cudaMalloc"));
    EXPECT_EQ(StreamCapture::ExchangeThreadMode(CaptureMode::Global), CaptureMode::Relaxed);
    // Not in its own mode: the call fails and the capture is invalidated.
    EXPECT_TRUE(c.ForbidsUnsafeCall("cudaStreamSynchronize"));
    EXPECT_EQ(c.Query(kMain).status, CaptureStatus::Invalidated);
    EXPECT_EQ(c.End(kMain).error, CaptureError::Invalidated);

    ASSERT_EQ(c.Begin(kMain, CaptureMode::Global), CaptureError::None);
    std::thread([&] { other = c.ForbidsUnsafeCall("cudaMalloc"); }).join();
    EXPECT_TRUE(other); // a global capture forbids every global-mode thread
    EXPECT_EQ(c.End(kMain).error, CaptureError::Invalidated);
}

TEST(GraphReplayPlan, IndependentRootsStartAfterTheLaunchStreamsEarlierWork)
{
    CUgraph_st g;
    CUgraphNode_st* a = g.Add(GraphNodeKind::Empty, {});
    CUgraphNode_st* b = g.Add(GraphNodeKind::Empty, {});
    g.Add(GraphNodeKind::Empty, {a, b});
    const ReplayPlan plan = PlanReplay(g);
    ASSERT_EQ(plan.slots, 2u);
    // slot 0 records its start; b's slot waits for it before b
    EXPECT_EQ(plan.steps.front().kind, ReplayStep::Kind::Record);
    EXPECT_EQ(plan.steps.front().slot, 0u);
    EXPECT_EQ(plan.steps[2].kind, ReplayStep::Kind::Wait);
    EXPECT_EQ(plan.steps[2].slot, 1u);
    EXPECT_EQ(plan.steps[2].record, plan.steps.front().record);
    AddEdge(g.nodes[2].get(), a); // a cycle
    EXPECT_THROW(PlanReplay(g), std::invalid_argument);
}

TEST(CudaGraph, AChildGraphRunsBetweenTheNodesAroundItAndItsOwnChildToo)
{
    // grandchild: g1; child: c1 -> [grandchild] -> c2; parent: p1 -> [child] -> p2
    auto grandchild = std::make_unique<CUgraph_st>();
    grandchild->Add(GraphNodeKind::Op, {})->op = Kernel(kMain, "g1");
    int hooks = 0;
    grandchild->replayHooks.push_back([&] { ++hooks; });
    auto child = std::make_unique<CUgraph_st>();
    CUgraphNode_st* c1 = child->Add(GraphNodeKind::Op, {});
    c1->op = Kernel(kMain, "c1");
    CUgraphNode_st* inner = child->Add(GraphNodeKind::Child, {c1});
    inner->child = grandchild->Clone();
    child->Add(GraphNodeKind::Op, {inner})->op = Kernel(kMain, "c2");
    CUgraph_st parent;
    CUgraphNode_st* p1 = parent.Add(GraphNodeKind::Op, {});
    p1->op = Kernel(kMain, "p1");
    CUgraphNode_st* node = parent.Add(GraphNodeKind::Child, {p1});
    node->child = child->Clone();
    parent.Add(GraphNodeKind::Op, {node})->op = Kernel(kMain, "p2");

    std::unique_ptr<CUgraph_st> flat = parent.Clone();
    ASSERT_EQ(flat->nodes[1]->kind, GraphNodeKind::Child); // the clone keeps its own child
    flat->FlattenChildren();
    std::vector<std::string> kernels;
    for (const CUgraphNode_st* n : flat->TopologicalOrder())
    {
        EXPECT_NE(n->kind, GraphNodeKind::Child);
        EXPECT_EQ(n->graph, flat.get());
        if (n->kind == GraphNodeKind::Op)
        {
            kernels.emplace_back(NameOf(n));
        }
    }
    EXPECT_EQ(kernels, (std::vector<std::string>{"p1", "c1", "g1", "c2", "p2"}));
    // one chain: every kernel after the one before it, so one stream replays them in order
    EXPECT_EQ(PlanReplay(*flat).slots, 1u);
    ASSERT_EQ(flat->replayHooks.size(), 1u);
    flat->replayHooks.front()();
    EXPECT_EQ(hooks, 1);
    // the parent itself is untouched: instantiation flattens its copy
    EXPECT_EQ(parent.nodes.size(), 3u);
    EXPECT_EQ(parent.nodes[1]->kind, GraphNodeKind::Child);
}
