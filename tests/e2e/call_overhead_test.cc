// The real runtime's host time per call, as the scenario gives it: a call that
// submits GPU work costs call_overhead, any other call query_overhead, and with CPU
// time off that is all a rank's clock sees between calls.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <regex>

using namespace phantora::test;

namespace
{

/// The benchmark's "kind call ns/call" figure for \p call.
double NsPerCall(const std::string& output, const std::string& call)
{
    std::smatch m;
    const std::regex line("(work|other) +" + call + R"( +([0-9.]+)\n)");
    return std::regex_search(output, m, line) ? std::stod(m[2]) : -1.0;
}

} // namespace

TEST(CallOverhead, WorkSubmittingCallsCostCallOverheadAndOthersQueryOverhead)
{
    const auto scenario =
        WriteFile("s.toml", SwitchScenario(1, "[cpu]\ntime_scale = 0.0\ncall_overhead = \"1us\"\n"
                                              "query_overhead = \"100ns\"\n"));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {} 512", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_CALL_COST_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    // <<<>>>'s __cudaPushCallConfiguration / __cudaPopCallConfiguration are bookkeeping
    // inside the interposer, not calls of their own
    EXPECT_DOUBLE_EQ(NsPerCall(r.output, "cudaLaunchKernel"), 1000) << r.output;
    EXPECT_DOUBLE_EQ(NsPerCall(r.output, "cudaMemcpyAsync DtoD 4 KiB"), 1000) << r.output;
    EXPECT_DOUBLE_EQ(NsPerCall(r.output, "cudaMemsetAsync 4 KiB"), 1000) << r.output;
    EXPECT_DOUBLE_EQ(NsPerCall(r.output, "cudaEventRecord"), 100) << r.output;
    EXPECT_DOUBLE_EQ(NsPerCall(r.output, "cudaStreamWaitEvent"), 100) << r.output;
    EXPECT_DOUBLE_EQ(NsPerCall(r.output, "cudaGetDevice"), 100) << r.output;
}
