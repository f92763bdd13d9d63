// cudaLaunchHostFunc and cudaStreamAddCallback run in the rank when the simulated
// stream reaches them, in stream order, and hold the stream until they return.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace phantora::test;

TEST(HostFunctions, RunWhenTheStreamReachesThemAndHoldIt)
{
    const auto scenario = WriteFile("hostfn.toml", "name = \"hostfn\"\n" + SwitchScenario(1, R"(
[kernels.durations]
hostfn_a = "100us"
hostfn_b = "200us"
hostfn_c = "300us"
)") + R"(
[cpu]
time_scale = 0.0
)");
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_HOST_FUNCTION_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    // The scenario has no launch latency and no per-call cost: A ends at 100 us; the
    // first function runs then and sleeps 50 us of simulated time; B follows it, the
    // callback runs when B is done, C follows the callback.
    EXPECT_NE(r.output.find("first host function at 100.000 us (order 0)"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("second host function at 350.000 us (order 1)"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("stream took 650.000 us"), std::string::npos) << r.output;
}
