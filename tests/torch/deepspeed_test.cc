// DeepSpeed 0.19.8 (build/venv, PHANTORA_WITH_DEEPSPEED) under phantora-cluster with no
// GPU: examples/deepspeed/train_gpt.py with ZeRO-1 and ZeRO-3 on 2 ranks of a tiny model
// issues the collectives its stage is made of on the data-parallel group, its steps take
// positive, steady simulated time, DeepSpeed's own timers and throughput log print, and
// asking for FusedAdam (a JIT-compiled op) ends the run with a message naming it.
#include "../e2e/run_helpers.h"
#include "framework_checks.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

using namespace phantora::test;

namespace
{

const std::string kSource = PHANTORA_SOURCE_DIR;
const std::string kExample = kSource + "/examples/deepspeed/train_gpt.py";
const int kSteps = 5;
// A 2-core CI machine runs 2 ranks of this in about a minute (2026-11-26).
const std::string kTinyModel =
    fmt::format("--layers 2 --width 128 --heads 4 --seq 64 --vocab 1024 --steps {}", kSteps);

CommandResult Simulate(const std::string& args, const std::string& report)
{
    return RunCommand(
        fmt::format("timeout 600 {} --scenario {} --nproc 2 --report {} -- {} {} {} 2>&1",
                    PHANTORA_CLUSTER, CpuFreeScenario(kSource + "/scenarios/h200x4-nvlink.toml"),
                    report, PHANTORA_TORCH_PYTHON, kExample, args));
}

/// How often rank \p rank issued \p op on the communicator of both ranks, and its bytes.
std::pair<uint64_t, uint64_t> OnBoth(const nlohmann::json& report, int rank, const std::string& op)
{
    uint64_t count = 0, bytes = 0;
    for (const auto& g : report["ranks"][rank]["collectives_by_group"])
    {
        if (g["op"] == op && g["group"].get<std::vector<int>>() == std::vector<int>{0, 1})
        {
            count += g["count"].get<uint64_t>();
            bytes += g["bytes"].get<uint64_t>();
        }
    }
    return {count, bytes};
}

/// DeepSpeed's own logs: its timers (wall_clock_breakdown) and its throughput log
/// (steps_per_print), both from simulated time.
void ExpectDeepSpeedLogs(const std::string& output)
{
    const std::regex timers(
        R"(\[rank 0\] \[Rank 0\] time \(ms\) \| fwd: ([0-9.]+) \| bwd: ([0-9.]+))");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(output, m, timers)) << output;
    EXPECT_GT(std::stod(m[1]), 0.0);
    EXPECT_GT(std::stod(m[2]), 0.0);
    const std::regex throughput(R"(global_step=(\d+), RunningAvgSamplesPerSec=([0-9.]+))");
    ASSERT_TRUE(std::regex_search(output, m, throughput)) << output;
    EXPECT_GT(std::stod(m[2]), 0.0);
}

} // namespace

// ZeRO-1 partitions the optimizer state: gradients are reduced across both ranks every
// step and each rank's updated partition is all-gathered back into the bf16 parameters.
TEST(DeepSpeed, ZeroStageOneReducesGradientsAndGathersParametersEveryStep)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Simulate(
        kTinyModel + " --deepspeed_config " + kSource + "/examples/deepspeed/zero1.json", report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("ZeRO stage 1, bf16 True"), std::string::npos) << r.output;
    ExpectPositiveAndSteady(StepMs(r.output), 0.1, kSteps, kSteps);
    ExpectDeepSpeedLogs(r.output);

    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 2u);
    for (int rank = 0; rank < 2; ++rank)
    {
        // initialize broadcasts every parameter from rank 0
        EXPECT_GE(OnBoth(j, rank, "broadcast").first, 8u) << "rank " << rank;
        const auto gathers = OnBoth(j, rank, "all_gather");
        EXPECT_GE(gathers.first, static_cast<uint64_t>(kSteps)) << "rank " << rank;
        EXPECT_GT(gathers.second, 0u);
        const uint64_t reductions = OnBoth(j, rank, "reduce_scatter").first +
                                    OnBoth(j, rank, "reduce").first +
                                    OnBoth(j, rank, "all_reduce").first;
        EXPECT_GE(reductions, static_cast<uint64_t>(kSteps)) << "rank " << rank;
    }
}

// ZeRO-3 partitions the parameters too: each layer's parameters are all-gathered before
// its forward and again before its backward, and gradients are reduce-scattered.
TEST(DeepSpeed, ZeroStageThreeGathersParametersPerLayerAndReduceScattersGradients)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Simulate(
        kTinyModel + " --deepspeed_config " + kSource + "/examples/deepspeed/zero3.json", report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("ZeRO stage 3, bf16 True"), std::string::npos) << r.output;
    ExpectPositiveAndSteady(StepMs(r.output), 0.1, kSteps, kSteps);
    ExpectDeepSpeedLogs(r.output);

    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 2u);
    for (int rank = 0; rank < 2; ++rank)
    {
        // 2 blocks, forward and backward, every step
        EXPECT_GE(OnBoth(j, rank, "all_gather").first, 2u * 2 * kSteps) << "rank " << rank;
        EXPECT_GE(OnBoth(j, rank, "reduce_scatter").first, static_cast<uint64_t>(kSteps))
            << "rank " << rank;
    }
}

// DeepSpeed's FusedAdam (the config's "Adam" with no client optimizer) is compiled at
// run time; the simulator serves no compiled DeepSpeed op and says so at once.
TEST(DeepSpeed, AskingForFusedAdamEndsTheRunNamingIt)
{
    const std::string config = WriteFile("fused_adam.json", R"({
  "train_micro_batch_size_per_gpu": 4,
  "bf16": { "enabled": true },
  "optimizer": { "type": "Adam", "params": { "lr": 0.0003 } },
  "zero_optimization": { "stage": 1 }
})")
                                   .string();
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r =
        Simulate(kTinyModel + " --optimizer config --deepspeed_config " + config, report);
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("DeepSpeed op 'fused_adam' (FusedAdamBuilder) needs JIT compilation"),
              std::string::npos)
        << r.output;
    // 3: a rank failed (engine/simulation_error.h); it exited with its Python error, not a signal
    EXPECT_EQ(r.exitCode, 3) << r.output;
    EXPECT_NE(r.output.find("exited with status 1"), std::string::npos)
        << "the rank should exit with its Python error, not a signal\n"
        << r.output;
}
