// examples/cuda/graph_step.cu end to end: a step captured into a CUDA graph from two
// streams (a copy, three kernels, a fork and a join, a host function) and launched every
// step.  Each replay must be the captured ops on their streams, timed as the same ops
// issued directly, with one launch's host cost and the graph node gap between nodes.
#include "run_helpers.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace phantora::test;

namespace
{

constexpr int kSteps = 5;
constexpr double kCallOverheadUs = 5.0;
constexpr double kLaunchLatencyUs = 4.0;
constexpr double kStreamGapUs = 1.5;
constexpr double kGraphNodeGapUs = 1.0;
constexpr double kCopyUs = 1048576 / 55e9 * 1e6; // the batch, 1 MiB at 55 GB/s

std::string Scenario(double forwardUs, double sideUs, double updateUs,
                     const std::string& pcie = "55GB/s")
{
    return fmt::format(R"(name = "graph"
[gpu]
model = "H200"
memory = "141GiB"
launch_latency = "{}us"
stream_gap = "{}us"
graph_node_gap = "{}us"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "{}"
[cpu]
time_scale = 0.0
call_overhead = "{}us"
[topology]
kind = "switch"
gpus = 1
link_bandwidth = "400Gbps"
link_latency = "1us"
[kernels]
default = "1us"
[kernels.durations]
phantora_graph_forward = "{}us"
phantora_graph_side = "{}us"
phantora_graph_update = "{}us"
)",
                       kLaunchLatencyUs, kStreamGapUs, kGraphNodeGapUs, pcie, kCallOverheadUs,
                       forwardUs, sideUs, updateUs);
}

struct GraphRun
{
    CommandResult cmd;
    std::map<std::pair<int, int>, int64_t> steps;
    nlohmann::json report;
};

GraphRun Simulate(const std::string& scenarioText, const std::string& args)
{
    const auto scenario = WriteFile("graph.toml", scenarioText);
    const auto report = ScratchDir() / "graph-report.json";
    GraphRun r;
    r.cmd = RunCommand(fmt::format("{} --scenario {} --nproc 1 --report {} -- {} {} {}",
                                   PHANTORA_CLUSTER, scenario.string(), report.string(),
                                   PHANTORA_CUDA_GRAPH_EXAMPLE, kSteps, args));
    r.steps = StepTimesNs(r.cmd.output);
    std::ifstream in(report);
    if (in)
    {
        r.report = nlohmann::json::parse(in);
    }
    return r;
}

} // namespace

TEST(CudaGraph, EveryReplayIsTheCapturedStepWithOneLaunchCost)
{
    const GraphRun r = Simulate(Scenario(100, 30, 20), "");
    ASSERT_EQ(r.cmd.exitCode, 0) << r.cmd.output;
    EXPECT_NE(r.cmd.output.find("graph nodes 5"), std::string::npos) << r.cmd.output;
    EXPECT_NE(r.cmd.output.find("host functions run 5 of 5 steps"), std::string::npos)
        << r.cmd.output;
    ASSERT_EQ(r.steps.size(), static_cast<std::size_t>(kSteps)) << r.cmd.output;
    // The start event is recorded a launch latency after its call; the graph's nodes, all
    // enqueued one call overhead later, start a launch latency after that: the copy, the
    // forward, the side kernel after the fork, the update after the join, each followed
    // by the graph node gap; then the host function's hold, which the stream gap follows.
    const double expectedUs =
        kCallOverheadUs + kCopyUs + 100 + 30 + 20 + 4 * kGraphNodeGapUs + kStreamGapUs;
    for (const auto& [key, ns] : r.steps)
    {
        EXPECT_EQ(ns, std::llround(expectedUs * 1000)) << "step " << key.second;
    }
    ASSERT_TRUE(r.report.contains("ranks")) << r.cmd.output;
    const auto& rank = r.report["ranks"][0];
    // Captured once, replayed every step: nothing ran at capture.
    EXPECT_EQ(rank["kernels"].get<int>(), 3 * kSteps);
    EXPECT_EQ(rank["copies"].get<int>(), kSteps);
    EXPECT_EQ(rank["graph_nodes"].get<int>(), 4 * kSteps);
}

TEST(CudaGraph, ReplayedOpsAreTimedAsTheSameOpsIssuedDirectly)
{
    const GraphRun graph = Simulate(Scenario(100, 30, 20), "");
    const GraphRun eager = Simulate(Scenario(100, 30, 20), "--eager");
    ASSERT_EQ(graph.cmd.exitCode, 0) << graph.cmd.output;
    ASSERT_EQ(eager.cmd.exitCode, 0) << eager.cmd.output;
    ASSERT_EQ(eager.steps.size(), static_cast<std::size_t>(kSteps)) << eager.cmd.output;
    // Long kernels keep the GPU behind the host: the two differ only by the gap after
    // each of the four ops (the stream gap directly, the graph node gap in the graph).
    EXPECT_EQ(eager.steps.at({0, 2}) - graph.steps.at({0, 2}),
              std::llround(4 * (kStreamGapUs - kGraphNodeGapUs) * 1000));
    EXPECT_EQ(eager.report["ranks"][0]["graph_nodes"].get<int>(), 0);
}

TEST(CudaGraph, ShortKernelsNoLongerWaitForTheHost)
{
    // 1 us kernels and a copy over a link fast enough to take no time: issued directly,
    // the step is the host's launches (5 us each); in the graph one launch pays for all.
    const GraphRun graph = Simulate(Scenario(1, 1, 1, "55000TB/s"), "");
    const GraphRun eager = Simulate(Scenario(1, 1, 1, "55000TB/s"), "--eager");
    ASSERT_EQ(graph.cmd.exitCode, 0) << graph.cmd.output;
    ASSERT_EQ(eager.cmd.exitCode, 0) << eager.cmd.output;
    const int64_t graphNs = graph.steps.at({0, 2});
    const int64_t eagerNs = eager.steps.at({0, 2});
    EXPECT_GT(graphNs, 0);
    EXPECT_LT(graphNs + 10000, eagerNs) << "graph " << graphNs << " ns, eager " << eagerNs << " ns";
    std::printf("1 us kernels: step %.3f us as a graph, %.3f us issued directly\n", graphNs / 1e3,
                eagerNs / 1e3);
}

TEST(CudaGraph, ExplicitlyBuiltGraphRunsItsBranchesSideBySideAndTimesItsChildGraphs)
{
    const auto scenario =
        WriteFile("graph-api.toml", Scenario(0, 0, 0) + R"(phantora_api_left = "30us"
phantora_api_right = "50us"
)");
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_GRAPH_API_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("nodes 7 roots 1 end-deps 2 kernel-type 1"), std::string::npos)
        << r.output;
    // The event record nodes around the two kernels: they run side by side (the graph's
    // own stream for the second), so the span is the longer one and its node gap.
    for (int i = 0; i < 3; ++i)
    {
        EXPECT_NE(
            r.output.find(fmt::format("launch {} kernels took {:.3f} us", i, 50 + kGraphNodeGapUs)),
            std::string::npos)
            << r.output;
    }
    EXPECT_NE(r.output.find("host node ran 3 times"), std::string::npos) << r.output;
    // A child graph (left, then right) between two event records, added as a node and
    // captured as a graph launched into a capture: its kernels one after the other, each
    // followed by the node gap.
    const double childUs = 30 + 50 + 2 * kGraphNodeGapUs;
    EXPECT_NE(r.output.find(fmt::format("child graph node (type graph 1) took {:.3f} us", childUs)),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(fmt::format("graph launched into a capture took {:.3f} us", childUs)),
              std::string::npos)
        << r.output;
}
