// examples/torch/train_cuda_graph.py on 2 ranks: forward, backward, a gradient all-reduce
// and the SGD step captured in torch.cuda.CUDAGraph, then replayed every step.  Every
// replay must issue the captured kernels and collectives again (matched across ranks as
// eager ones are) and take the same, positive, simulated time.
#include "../e2e/run_helpers.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

using namespace phantora::test;

TEST(TorchCudaGraph, CapturedStepWithAllReduceReplaysOnTwoRanks)
{
    constexpr int kSteps = 4;
    constexpr int kLayers = 2;
    constexpr int kWarmupSteps = 3; // the example's eager steps before the capture
    const auto report = ScratchDir() / "cuda-graph-report.json";
    const CommandResult r = RunCommand(fmt::format(
        "{} --scenario {}/scenarios/h200x2-nvlink-profiled.toml --nproc 2 --report {} -- {} "
        "{}/examples/torch/train_cuda_graph.py --steps {} --layers {} --width 512 2>&1",
        PHANTORA_CLUSTER, PHANTORA_SOURCE_DIR, report.string(), PHANTORA_TORCH_PYTHON,
        PHANTORA_SOURCE_DIR, kSteps, kLayers));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    std::vector<double> stepsMs;
    const std::regex line(R"(\[rank 0\] step \d+: ([0-9.]+) ms)");
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), line), end; it != end; ++it)
    {
        stepsMs.push_back(std::stod((*it)[1]));
    }
    ASSERT_EQ(stepsMs.size(), static_cast<std::size_t>(kSteps)) << r.output;
    // The first replay's host time is its own (the recorded gaps before a first call);
    // from the second on, every replay is the same GPU work, and its host gaps the
    // recording's (the program is in the H200 profile: a replay's gaps are keyed by the
    // calls before them, so the second replay's may differ from the later ones' by a
    // printed microsecond or so).
    for (std::size_t s = 0; s < stepsMs.size(); ++s)
    {
        EXPECT_GT(stepsMs[s], 0.0);
        if (s > 0)
        {
            EXPECT_NEAR(stepsMs[s], stepsMs.back(), 0.02 * stepsMs.back()) << r.output;
        }
    }
    std::ifstream in(report);
    const nlohmann::json j = nlohmann::json::parse(in);
    ASSERT_EQ(j["ranks"].size(), 2u);
    for (const auto& rank : j["ranks"])
    {
        // One all-reduce per parameter (a weight and a bias per layer) in each eager
        // warm-up step and each replay; none at the capture itself.
        EXPECT_EQ(rank["collectives"].get<int>(), (kWarmupSteps + kSteps) * 2 * kLayers);
        const int nodes = rank["graph_nodes"].get<int>();
        EXPECT_EQ(nodes % kSteps, 0) << nodes;
        EXPECT_GT(nodes / kSteps, 2 * kLayers) << nodes; // the collectives and the kernels
    }
}
