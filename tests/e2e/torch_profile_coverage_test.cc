// examples/torch/train_gpt.py (stock PyTorch) simulated with the committed profiles: its
// kernels and GEMMs were recorded on the real GPUs, so almost all of its GPU time must
// come from measurements, and nothing may fall back to the scenario's default.
#include "run_helpers.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace phantora::test;
namespace fs = std::filesystem;

class TorchProfileCoverage : public ::testing::TestWithParam<std::string>
{
};

TEST_P(TorchProfileCoverage, TheGptExampleIsTimedFromMeasurements)
{
    // A developer may point the test at another environment holding the torch wheel.
    const char* python = std::getenv("PHANTORA_TORCH_PYTHON");
    const fs::path scenario =
        fs::path(PHANTORA_SOURCE_DIR) / "scenarios" / (GetParam() + "-profile.toml");
    const auto report = ScratchDir() / "report.json";
    const CommandResult r = RunCommand(fmt::format(
        "{} --scenario {} --nproc 1 --report {} -- {} {}/examples/torch/train_gpt.py --steps 3",
        PHANTORA_CLUSTER, scenario.string(), report.string(),
        python ? python : PHANTORA_TORCH_PYTHON, PHANTORA_SOURCE_DIR));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    std::ifstream in(report);
    const auto k = nlohmann::json::parse(in)["kernels"];
    EXPECT_GE(k["coverage"]["measured_share"].get<double>(), 0.99) << k.dump(1);
    EXPECT_EQ(k["defaulted"].get<int>(), 0) << k.dump(1);
    int ops = 0;
    for (const auto& [source, totals] : k["coverage"]["by_source"].items())
    {
        ops += totals["ops"].get<int>();
    }
    EXPECT_GT(ops, 500) << k.dump(1); // a GPT training step is hundreds of launches
    EXPECT_GE(k["measured"].get<int>(), ops * 99 / 100) << k.dump(1);
    // The facts the interposer reads from the stock wheel's fat binaries meet those the
    // recorder read on the GPU machine: launches with scalar arguments (elementwise
    // counts, softmax rows, layer-norm widths) take their own arguments' median.
    EXPECT_GT(k["measured_at_arguments"].get<int>(), ops / 4) << k.dump(1);
}

INSTANTIATE_TEST_SUITE_P(Gpus, TorchProfileCoverage, ::testing::Values("h100", "h200"));
