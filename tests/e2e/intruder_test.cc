// Strangers on the bridge's socket are refused and logged; the run goes on.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace phantora::test;

TEST(BridgeSocket, ForeignBytesAndWrongTokensAreRefusedWithoutEndingTheRun)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(1));
    const CommandResult r = RunCommand(
        fmt::format("PHANTORA_EXAMPLE_ID_FILE={} {} --scenario {} --nproc 1 -- {} {} 1024 2",
                    (ScratchDir() / "id").string(), PHANTORA_CLUSTER, scenario.string(),
                    PHANTORA_INTRUDER_PROGRAM, PHANTORA_CUDA_EXAMPLE));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("intruder refused: wrong phantora token"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("does not start with the phantora magic"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("refused a connection claiming rank 0"), std::string::npos) << r.output;
    // and the real program, the same process afterwards, ran to the end as rank 0
    EXPECT_NE(r.output.find("rank 0 step 1 time"), std::string::npos) << r.output;
}
