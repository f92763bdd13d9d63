// Rank folding (docs/folding.md): one live process stands for its data-parallel replicas,
// and the simulated world is the full one.  Folded and unfolded runs of the same DDP
// program must give the same simulated step times: every collective still runs on the
// network with all its members, and the absent ones reach it when the live one does.
#include "framework_checks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <regex>
#include <string>
#include <vector>

using namespace phantora::test;

namespace
{

const std::string kExample = std::string(PHANTORA_SOURCE_DIR) + "/examples/torch/train_gpt.py";
const std::string kSmallModel = "--layers 2 --width 256 --heads 4 --seq 128 --batch 4 --vocab 4096";

/// 2 servers of 4 H100s (the data-parallel all-reduce crosses the InfiniBand fabric), flow
/// level, CPU work free: a step is its GPU and network time.
std::string Scenario()
{
    return WriteFile("fold-scenario.toml",
                     fmt::format("extends = \"{}/scenarios/cluster-2x8-h100-ib.toml\"\n"
                                 "[cpu]\ntime_scale = 0\n[topology]\ngpus_per_node = 4\n"
                                 "[network]\ntransport = \"flow\"\n",
                                 PHANTORA_SOURCE_DIR))
        .string();
}

CommandResult Simulate(const std::string& options, const std::string& report,
                       const std::string& env = "")
{
    return RunCommand(fmt::format(
        "{} timeout 500 {} --scenario {} --nproc 8 {} --report {} -- {} {} {} --steps 3 "
        "--mode ddp 2>&1",
        env.empty() ? "" : "env " + env, PHANTORA_CLUSTER, Scenario(), options, report,
        PHANTORA_TORCH_PYTHON, kExample, kSmallModel));
}

/// Rank 0's step lines as printed ("step N: X ms").
std::vector<std::string> StepLines(const std::string& output)
{
    const std::regex line(R"(\[rank 0\] (step \d+: [0-9.]+ ms))");
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
         it != std::sregex_iterator(); ++it)
    {
        out.push_back((*it)[1]);
    }
    return out;
}

} // namespace

TEST(Fold, AFoldedDdpRunGivesTheUnfoldedStepTimes)
{
    const std::string unfoldedReport = WriteFile("unfolded.json", "").string();
    const std::string foldedReport = WriteFile("folded.json", "").string();
    const CommandResult unfolded = Simulate("", unfoldedReport);
    ASSERT_EQ(unfolded.exitCode, 0) << unfolded.output;
    const CommandResult folded = Simulate("--fold 8", foldedReport);
    ASSERT_EQ(folded.exitCode, 0) << folded.output;

    const auto unfoldedSteps = StepLines(unfolded.output);
    ASSERT_EQ(unfoldedSteps.size(), 3U) << unfolded.output;
    const auto foldedSteps = StepLines(folded.output);
    ASSERT_EQ(foldedSteps.size(), 3U) << folded.output;
    // Steady steps are the same to the printed digit.  Step 0 is not: each member of a
    // collective ends at its own last transfer (DDP's initial broadcast: the root first),
    // and a live replica standing for absent ones follows the slowest end, so the wait
    // that unfolded rank 0 spends inside step 0 (for the others to reach its first
    // all-reduce) falls before the step when folded.
    EXPECT_EQ(std::vector(foldedSteps.begin() + 1, foldedSteps.end()),
              std::vector(unfoldedSteps.begin() + 1, unfoldedSteps.end()))
        << "unfolded:\n"
        << unfolded.output << "\nfolded:\n"
        << folded.output;
    const auto ms = [](const std::string& line)
    { return std::stod(line.substr(line.find(':') + 1)); };
    EXPECT_LE(ms(foldedSteps[0]), ms(unfoldedSteps[0])) << folded.output;
    // only the live rank runs, so only it prints
    EXPECT_NE(unfolded.output.find("[rank 7]"), std::string::npos);
    EXPECT_EQ(folded.output.find("[rank 7]"), std::string::npos) << folded.output;
    EXPECT_NE(folded.output.find("folded: 8 ranks as 1 live x 8 replicas"), std::string::npos)
        << folded.output;

    // the report covers the world: each absent rank as the live one, whose clock is the
    // unfolded run's
    const auto u = ReadJson(unfoldedReport);
    const auto f = ReadJson(foldedReport);
    ASSERT_EQ(f["ranks"].size(), 8U);
    EXPECT_EQ(f["fold"]["live_ranks"], 1);
    for (int rank = 1; rank < 8; ++rank)
    {
        EXPECT_EQ(f["ranks"][rank]["state"], "folded");
        EXPECT_EQ(f["ranks"][rank]["folded_into"], 0);
    }
    EXPECT_EQ(f["ranks"][0]["collectives"], u["ranks"][0]["collectives"]);
    // the world's all-reduces: 8 members, as in the unfolded run
    EXPECT_EQ(f["ranks"][0]["collectives_by_group"], u["ranks"][0]["collectives_by_group"]);
}

TEST(Fold, ALayoutThatDoesNotDivideTheWorldIsRefusedBeforeAnyRankStarts)
{
    const CommandResult r = Simulate("--fold 3", WriteFile("refused.json", "").string());
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find("not a multiple of replicas x stride"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("[rank 0]"), std::string::npos) << r.output;
}

TEST(Fold, AStoreBarrierCountingAbsentRanksIsRefused)
{
    const CommandResult r =
        Simulate("--fold 8", WriteFile("refused.json", "").string(), "TORCH_DIST_INIT_BARRIER=1");
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find("TORCH_DIST_INIT_BARRIER"), std::string::npos) << r.output;
}
