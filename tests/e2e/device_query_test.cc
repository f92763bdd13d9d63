// Device queries describe the scenario's GPU.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace phantora::test;

TEST(DeviceQueries, DescribeTheScenarioGpu)
{
    const auto scenario = WriteFile("q.toml", R"(
[gpu]
model = "H100"
memory = "80GiB"
sm_count = 114
compute_capability = "9.0"
hbm_bandwidth = "2TB/s"
pcie_bandwidth = "55GB/s"
[topology]
kind = "switch"
gpus = 8
gpus_per_node = 4
link_bandwidth = "400Gbps"
link_latency = "1us"
[kernels]
default = "1us"
)");
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_DEVICE_QUERY_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const uint64_t total = 80ULL << 30;
    EXPECT_NE(r.output.find(fmt::format(
                  "devices 4 name 'NVIDIA H100' memory {} sms 114/114 cc 9.0/9", total)),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(fmt::format("meminfo free {} total {}", total - (1ULL << 30), total)),
              std::string::npos)
        << r.output;
    // device memory is device memory, pinned host memory is host memory
    EXPECT_NE(r.output.find(fmt::format("pointer types {} {} device 3 current 3",
                                        static_cast<int>(2), static_cast<int>(0))),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("peer 1 capturing 0"), std::string::npos) << r.output;
}
