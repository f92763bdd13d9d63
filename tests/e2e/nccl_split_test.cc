// ncclCommSplit: members with one color form a communicator ordered by key.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace phantora::test;

TEST(NcclSplit, ColorsFormCommunicatorsOrderedByKey)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(5));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 5 -- {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_NCCL_SPLIT_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    // colors: 0, 1, 0, 1, none; key -rank puts higher ranks first
    EXPECT_NE(r.output.find("rank 0: color 0, 2 ranks, rank 1 in it, async 0"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("rank 2: color 0, 2 ranks, rank 0 in it, async 0"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("rank 1: color 1, 2 ranks, rank 1 in it"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("rank 3: color 1, 2 ranks, rank 0 in it"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("rank 4: no communicator"), std::string::npos) << r.output;
}
