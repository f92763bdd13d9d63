// NCCL send/recv from running programs: pipeline stages, all-to-all written as a
// group of sends and receives, grouped collectives, and the two ways a program gets
// point-to-point wrong.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <regex>

using namespace phantora::test;

namespace
{

CommandResult RunMode(const char* mode, int ranks)
{
    const auto scenario =
        WriteFile(fmt::format("p2p{}.toml", ranks), "name = \"p2p\"\n" + SwitchScenario(ranks, R"(
[kernels.durations]
p2p_stage = "100us"
[cpu]
time_scale = 0.0
)"));
    return RunCommand(fmt::format("{} --scenario {} --nproc {} -- {} {}", PHANTORA_CLUSTER,
                                  scenario.string(), ranks, PHANTORA_P2P_PROGRAM, mode));
}

} // namespace

TEST(P2P, PipelineStagesFinishOneTransferApart)
{
    constexpr int kRanks = 4;
    const CommandResult r = RunMode("pipeline", kRanks);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    std::map<int, double> done;
    static const std::regex line(R"(rank (\d+) pipeline done at ([0-9.]+) us)");
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), line), end; it != end; ++it)
    {
        done[std::stoi((*it)[1])] = std::stod((*it)[2]);
    }
    ASSERT_EQ(done.size(), static_cast<std::size_t>(kRanks)) << r.output;
    // A rank is done when its last send has arrived; the next one then computes its
    // stage (100 us) and sends on (8 MiB over 400 Gb/s: at least 168 us).  The last rank
    // only computes.
    const double transferUs = 8.0 * 1048576 * 8 / 400e3;
    for (int rank = 1; rank + 1 < kRanks; ++rank)
    {
        const double gap = done[rank] - done[rank - 1];
        EXPECT_GE(gap, 100 + transferUs) << r.output;
        EXPECT_LT(gap, 100 + 1.2 * transferUs) << r.output;
    }
    const double lastGap = done[kRanks - 1] - done[kRanks - 2];
    EXPECT_GE(lastGap, 100) << r.output;
    EXPECT_LT(lastGap, 101) << r.output;
    EXPECT_GE(done[0], 2 * 100 + 2 * transferUs) << "rank 0 sends two micro-batches";
}

TEST(P2P, GroupedSendRecvAllToAllCostsWhatAllToAllCosts)
{
    constexpr int kRanks = 4;
    const CommandResult r = RunMode("alltoall", kRanks);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    static const std::regex line(
        R"(rank (\d+) grouped send/recv ([0-9.]+) us, ncclAlltoAll ([0-9.]+) us)");
    int seen = 0;
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), line), end; it != end; ++it)
    {
        const double grouped = std::stod((*it)[2]);
        const double alltoall = std::stod((*it)[3]);
        std::printf("rank %s: grouped send/recv %.3f us, ncclAlltoAll %.3f us\n",
                    (*it)[1].str().c_str(), grouped, alltoall);
        EXPECT_NEAR(grouped, alltoall, 0.15 * alltoall) << (*it)[0];
        ++seen;
    }
    EXPECT_EQ(seen, kRanks) << r.output;
}

TEST(P2P, CollectivesInOneGroupBothRun)
{
    const CommandResult r = RunMode("groupcoll", 2);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("rank 1 grouped collectives done"), std::string::npos) << r.output;
}

TEST(P2P, MismatchedSizeEndsTheRunNamingBothRanks)
{
    const CommandResult r = RunMode("mismatch", 2);
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("rank 0 sends 8388608 bytes but rank 1 receives 16777216 bytes"),
              std::string::npos)
        << r.output;
}

TEST(P2P, UnmatchedSendIsReportedAsADeadlock)
{
    const CommandResult r = RunMode("unmatched", 2);
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("deadlock"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("send #0 of 8388608 bytes from rank 0 to rank 1"), std::string::npos)
        << r.output;
}
