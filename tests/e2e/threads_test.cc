// A rank whose threads share CUDA and NCCL work (a worker launching kernels and
// all-reduces handed over through condition variables, a watchdog polling events
// with real sleeps) gets exactly the step times of the same work done by one thread,
// and the same times again under random host delays.
#include "run_helpers.h"

#include <cerrno>
#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace phantora::test;

namespace
{

constexpr int kRanks = 3;
constexpr int kSteps = 4;

std::string Scenario()
{
    return fmt::format(R"(name = "threads"
[gpu]
model = "H200"
memory = "141GiB"
launch_latency = "4us"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
[cpu]
time_scale = 0.0
call_overhead = "2us"
[topology]
kind = "switch"
gpus = {}
link_bandwidth = "400Gbps"
link_latency = "1us"
[kernels]
default = "1us"
[kernels.durations]
thread_fwd = "200us"
thread_bwd = "300us"
)",
                       kRanks);
}

std::map<std::pair<int, int>, int64_t> RunMode(const char* mode, const char* env = "")
{
    const auto scenario = WriteFile("threads.toml", Scenario());
    const CommandResult r =
        // A thread that held simulated time back would stall the run: fail, do not hang.
        RunCommand(fmt::format("{} timeout 120 {} --scenario {} --nproc {} -- {} {}", env,
                               PHANTORA_CLUSTER, scenario.string(), kRanks,
                               PHANTORA_THREADS_PROGRAM, mode));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    if (std::string(mode) == "threads")
    {
        for (int rank = 0; rank < kRanks; ++rank)
        {
            EXPECT_NE(r.output.find(fmt::format("rank {} threads joined", rank)), std::string::npos)
                << r.output;
        }
    }
    auto steps = StepTimesNs(r.output);
    EXPECT_EQ(steps.size(), static_cast<std::size_t>(kRanks * kSteps)) << r.output;
    return steps;
}

} // namespace

TEST(Threads, HandOffsGiveTheSingleThreadTimesEveryTime)
{
    const auto single = RunMode("single");
    ASSERT_EQ(single.size(), static_cast<std::size_t>(kRanks * kSteps));
    for (const auto& [key, ns] : single)
    {
        // forward and backward kernels back to back, then a 4 MiB all-reduce over
        // 400 Gb/s links (at least 2 x 2/3 x 4 MiB through each rank's link)
        EXPECT_GT(ns, 500000 + 2 * 4194304LL * 8 * 2 / 3 / 400) << "rank " << key.first;
    }
    EXPECT_EQ(RunMode("threads"), single);
    EXPECT_EQ(RunMode("threads", "PHANTORA_JITTER_US=300"), single);
    EXPECT_EQ(RunMode("threads", "PHANTORA_JITTER_US=300"), single);
}

// A thread blocked in poll, epoll_wait or select that a signal interrupts returns -1 with
// errno EINTR, as without the interposer, although the interposer reports the wait's end
// to the bridge (system calls of its own) before returning: gloo's event loop retries
// epoll_wait on EINTR and aborted ("loop.cc:210 nfds != -1") on the errno it found.
TEST(Threads, AnInterruptedIoWaitKeepsItsErrno)
{
    const auto scenario = WriteFile("threads.toml", Scenario());
    const CommandResult r =
        RunCommand(fmt::format("timeout 120 {} --scenario {} --nproc 1 -- {} eintr",
                               PHANTORA_CLUSTER, scenario.string(), PHANTORA_THREADS_PROGRAM));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    for (const char* call : {"poll", "epoll_wait", "select"})
    {
        EXPECT_NE(r.output.find(fmt::format("rank 0 {}: rc -1 errno {} ", call, EINTR)),
                  std::string::npos)
            << call << "\n"
            << r.output;
    }
}
