// Every NCCL collective called by a running program takes, on the simulated network, the
// time the NCCL model gives it run alone (phantora-nccl-tests' path), whatever its root; each
// rank's stream moves on when its own part ends.
#include "nccl/config.h"
#include "nccl/environment.h"
#include "nccl_bench.h"
#include "run_helpers.h"
#include "scenario_loader.h"

#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <regex>

using namespace phantora::test;

namespace
{

/// "rank R op NAME time X us" -> NAME -> the smallest and the largest X over ranks, in us.
std::map<std::string, std::pair<double, double>> RankTimes(const std::string& output, int* lines)
{
    static const std::regex line(R"(rank (\d+) op (\w+) time ([0-9.]+) us)");
    std::map<std::string, std::pair<double, double>> out;
    *lines = 0;
    for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it)
    {
        ++*lines;
        const double us = std::stod((*it)[3]);
        auto [slot, fresh] = out.emplace((*it)[2], std::make_pair(us, us));
        if (!fresh)
        {
            slot->second.first = std::min(slot->second.first, us);
            slot->second.second = std::max(slot->second.second, us);
        }
    }
    return out;
}

/// Host time off: every rank reaches each collective at the same instant.
constexpr const char* kNoHostTime = "[cpu]\ntime_scale = 0.0\ncall_overhead = \"0us\"\n";

/// Runs the collectives program on \p ranks ranks (\p envPrefix before the command) and
/// checks every op's time against the NCCL model on \p scenario; returns the times seen.
std::map<std::string, std::pair<double, double>>
ExpectEachOpTakesTheModelsTime(const std::string& envPrefix, const std::filesystem::path& file,
                               const phantora::Scenario& scenario, int ranks, uint64_t bytes,
                               std::string* output)
{
    const CommandResult r = RunCommand(fmt::format("{}{} --scenario {} --nproc {} -- {} {}",
                                                   envPrefix, PHANTORA_CLUSTER, file.string(),
                                                   ranks, PHANTORA_COLLECTIVES_PROGRAM, bytes));
    *output = r.output;
    EXPECT_EQ(r.exitCode, 0) << r.output;
    int lines = 0;
    const auto seen = RankTimes(r.output, &lines);
    EXPECT_EQ(lines, 6 * ranks) << r.output;
    for (const auto& [name, range] : seen)
    {
        // Each rank ends its own part (a chain's root before its tail): the slowest rank's
        // time is the collective's.
        const double us = range.second;
        const auto kind = phantora::ParseCollectiveKind(name);
        EXPECT_TRUE(kind.has_value()) << name;
        if (!kind)
        {
            continue;
        }
        const double model =
            phantora::BenchCollective(scenario, *kind, static_cast<uint32_t>(ranks), bytes).timeUs;
        // With host time off the events bracket the collective alone.
        EXPECT_NEAR(us, model, 0.002)
            << name << ": program " << us << " us, model " << model << " us";
    }
    return seen;
}

class Collectives : public ::testing::TestWithParam<int>
{
};

} // namespace

TEST_P(Collectives, EachTakesWhatTheNcclModelGivesItAlone)
{
    const int ranks = GetParam();
    const uint64_t bytes = 64ULL << 20;
    const auto scenarioFile = WriteFile("s.toml", SwitchScenario(ranks, kNoHostTime));
    std::string output;
    const auto seen = ExpectEachOpTakesTheModelsTime(
        "", scenarioFile, phantora::LoadScenario(scenarioFile), ranks, bytes, &output);
    if (ranks > 2)
    {
        // A chain's ranks end on their own: the broadcast's root, the reduce's first sender
        // before the chain's far end; a ring's together.
        for (const char* chain : {"broadcast", "reduce"})
        {
            ASSERT_EQ(seen.count(chain), 1U) << output;
            EXPECT_LT(seen.at(chain).first, 0.9 * seen.at(chain).second) << chain << "\n" << output;
        }
        EXPECT_NEAR(seen.at("all_reduce").first, seen.at("all_reduce").second, 0.01) << output;
    }
    for (int rank = 0; rank < ranks; ++rank)
    {
        EXPECT_NE(output.find(fmt::format("rank {} bad root refused", rank)), std::string::npos)
            << output;
        EXPECT_NE(output.find(fmt::format("rank {} solo communicator of 1", rank)),
                  std::string::npos)
            << output;
    }
}

INSTANTIATE_TEST_SUITE_P(Ranks, Collectives, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(Collectives, ModelTimesDifferByOperation)
{
    // Guards the test above against every op collapsing onto one plan: on a ring, an
    // all-gather moves half the bytes an all-reduce of the same size moves.
    const auto scenarioFile = WriteFile("s.toml", SwitchScenario(4));
    const phantora::Scenario scenario = phantora::LoadScenario(scenarioFile);
    using K = phantora::nccl::CollectiveKind;
    const uint64_t bytes = 64ULL << 20;
    const double allReduce = phantora::BenchCollective(scenario, K::AllReduce, 4, bytes).timeUs;
    const double allGather = phantora::BenchCollective(scenario, K::AllGather, 4, bytes).timeUs;
    EXPECT_NEAR(allGather / allReduce, 0.5, 0.05);
}

TEST(Collectives, RanksNcclVariablesOverrideTheScenarioAsInNccl)
{
    const int ranks = 4;
    const uint64_t bytes = 64ULL << 20;
    const auto scenarioFile = WriteFile("s.toml", SwitchScenario(ranks, kNoHostTime));
    const phantora::Scenario plain = phantora::LoadScenario(scenarioFile);
    phantora::Scenario scenario = plain;
    scenario.nccl = phantora::nccl::WithEnvironment(scenario.nccl, {"", "LL", "", "2"});
    std::string output;
    const auto seen = ExpectEachOpTakesTheModelsTime("NCCL_PROTO=LL NCCL_MAX_NCHANNELS=2 ",
                                                     scenarioFile, scenario, ranks, bytes, &output);
    // The variables made a difference: LL on 2 channels is far slower than NCCL's choice.
    const double chosen =
        phantora::BenchCollective(plain, phantora::nccl::CollectiveKind::AllReduce,
                                  static_cast<uint32_t>(ranks), bytes)
            .timeUs;
    ASSERT_EQ(seen.count("all_reduce"), 1U) << output;
    EXPECT_GT(seen.at("all_reduce").second, 1.5 * chosen);
}

TEST(Collectives, AnNcclVariableNcclWouldRefuseEndsTheRunNamingIt)
{
    const auto scenarioFile = WriteFile("s.toml", SwitchScenario(2));
    const CommandResult r = RunCommand(
        fmt::format("NCCL_ALGO=rign {} --scenario {} --nproc 2 -- {} 4096", PHANTORA_CLUSTER,
                    scenarioFile.string(), PHANTORA_COLLECTIVES_PROGRAM));
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("NCCL_ALGO: unknown name 'rign'"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("rank 0 created a communicator"), std::string::npos) << r.output;
}

TEST(Collectives, RanksWithDifferentNcclVariablesAreNamed)
{
    const auto scenarioFile = WriteFile("s.toml", SwitchScenario(2));
    const CommandResult r = RunCommand(fmt::format(
        "{} --scenario {} --nproc 2 -- sh -c 'if [ \"$RANK\" = 1 ]; then export NCCL_PROTO=LL; fi; "
        "exec {} 4096'",
        PHANTORA_CLUSTER, scenarioFile.string(), PHANTORA_COLLECTIVES_PROGRAM));
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("ranks 0 and 1 created one communicator with different NCCL settings"),
              std::string::npos)
        << r.output;
}

TEST(Collectives, InitAllOfSeveralGpusInOneProcessEndsTheRankSayingWhy)
{
    const auto scenarioFile = WriteFile("s.toml", SwitchScenario(1));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {} 4096 init-all-2", PHANTORA_CLUSTER,
                               scenarioFile.string(), PHANTORA_COLLECTIVES_PROGRAM));
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("ncclCommInitAll(ndev 2): Phantora simulates one GPU per process"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("init-all-2 returned"), std::string::npos) << r.output;
}
