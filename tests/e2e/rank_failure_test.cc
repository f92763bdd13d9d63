// A rank that dies in the middle of a run: the simulation must end promptly,
// non-zero, naming that rank, and leave no rank process behind.
#include "run_helpers.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <dirent.h>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <sstream>
#include <thread>
#include <vector>

using namespace phantora::test;

namespace
{

const char* kScenario = R"(name = "kill"
[gpu]
model = "H200"
memory = "141GiB"
launch_latency = "4us"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
[topology]
kind = "switch"
gpus = 4
link_bandwidth = "400Gbps"
link_latency = "1us"
[kernels]
default = "10us"
)";

} // namespace

TEST(RankFailure, KillingARankMidRunEndsTheSimulationNamingIt)
{
    const auto scenario = WriteFile("kill.toml", kScenario);
    const std::string marker = (ScratchDir() / "nccl.id").string();
    const std::string markerVar = "PHANTORA_EXAMPLE_ID_FILE=" + marker;
    // Enough steps to run for minutes if nothing stopped it.
    auto run = std::async(std::launch::async,
                          [&]
                          {
                              return RunCommand(fmt::format(
                                  "{} {} --scenario {} --nproc 4 -- {} 65536 1000000000", markerVar,
                                  PHANTORA_CLUSTER, scenario.string(), PHANTORA_CUDA_EXAMPLE));
                          });

    // Wait until rank 1 is running, let it run a while, then kill it.
    int victim = 0;
    for (int i = 0; i < 200 && victim == 0; ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const auto pids = ProcessesWithEnvironment({markerVar, "RANK=1"});
        victim = pids.empty() ? 0 : pids.front();
    }
    ASSERT_NE(victim, 0) << "rank 1 never started";
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const auto killedAt = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(victim, SIGKILL), 0);

    ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready)
        << "the simulation did not end after rank 1 was killed";
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - killedAt).count();
    const CommandResult r = run.get();
    EXPECT_LT(seconds, 10.0);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.output.find(fmt::format("rank 1 (pid {}) was killed by signal 9", victim)),
              std::string::npos)
        << r.output.substr(r.output.size() > 4000 ? r.output.size() - 4000 : 0);
    // the example printed steps before the kill: it was mid-run
    EXPECT_NE(r.output.find("rank 1 step 1 "), std::string::npos);
    EXPECT_TRUE(ProcessesWithEnvironment({markerVar}).empty()) << "rank processes were left behind";
    std::printf("simulation ended %.3f s after rank 1 was killed\n", seconds);
}

// nvcc links the CUDA runtime into a program unless told otherwise; such a program's CUDA
// calls never reach the interposer.  It is refused before any rank starts, with the fix.
TEST(RankFailure, AProgramWithTheCudaRuntimeLinkedInIsRefusedWithTheFix)
{
    const auto scenario = WriteFile("static.toml", SwitchScenario(1));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {} 2>&1", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_STATIC_CUDART_PROGRAM));
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find("has the CUDA runtime linked into it"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("nvcc -cudart shared"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("synchronised"), std::string::npos) << r.output;
    // the dynamically linked example is not taken for one
    const CommandResult ok =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {} 1048576 1 2>&1", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_CUDA_EXAMPLE));
    EXPECT_EQ(ok.exitCode, 0) << ok.output;
}
