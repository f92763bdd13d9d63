// A rank whose threads share CUDA and NCCL work (a worker launching kernels and
// all-reduces handed over through condition variables, a watchdog polling events
// with real sleeps) gets exactly the step times of the same work done by one thread,
// and the same times again under random host delays.
#include "run_helpers.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

std::map<std::pair<int, int>, int64_t> RunMode(const char* mode, const char* env = "",
                                               std::string* output = nullptr)
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
    if (output)
    {
        *output = r.output;
    }
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

// Threads idle in timed waits that keep timing out (a watchdog's condition-variable wait,
// an event loop's epoll_wait after a notify that wakes nobody) cost the bridge a bounded
// number of requests however often they time out, while the main thread works, and the
// main thread's step times stay those of the same work alone.  Each timeout used to cost
// a Block and a Resume, paced by real time: at 48 Megatron ranks the bridge's one thread
// could not keep up (README).
TEST(Threads, IdleTimedWaitsCostTheBridgeBoundedRequests)
{
    const auto single = RunMode("single");
    std::string output;
    EXPECT_EQ(RunMode("idle", "", &output), single);
    for (int rank = 0; rank < kRanks; ++rank)
    {
        const auto at = output.find(fmt::format("rank {} idle waiter timed out ", rank));
        ASSERT_NE(at, std::string::npos) << output;
        int waiter = 0;
        int loop = 0;
        ASSERT_EQ(std::sscanf(output.c_str() + at,
                              "rank %*d idle waiter timed out %d times, idle "
                              "loop %d times",
                              &waiter, &loop),
                  2)
            << output;
        // 300 ms of the main thread's sleeps: the 1 ms waits time out many times over
        EXPECT_GT(waiter, 50) << output;
        EXPECT_GT(loop, 50) << output;
    }
    // "bridge: H host events: B Block, ...": the idle threads' timeouts would be 2 each
    // (hundreds per rank); what is left is each thread's start, first timeouts, wake and end.
    const auto at = output.find(" host events: ");
    ASSERT_NE(at, std::string::npos) << output;
    const auto start = output.rfind("bridge: ", at);
    ASSERT_NE(start, std::string::npos) << output;
    const long hostEvents = std::atol(output.c_str() + start + 8);
    std::printf("host events with idle threads: %ld\n", hostEvents);
    EXPECT_LT(hostEvents, 30 * kRanks) << output.substr(start, 200);
}

// A helper thread's timed waits that expire in real time (sem_timedwait: CPython's
// threading.Event.wait in tqdm's monitor thread; poll on a pipe; a condition variable's
// wait_for) move no simulated clock, so the main thread, which takes a token from the
// helper after each of its sleeps (as it takes CPython's GIL back), keeps the step times of the
// same work alone, whatever the host's speed.  A timeout used to move the helper's clock by the
// time asked for, and the main thread took that clock up with the token: TorchTitan's Llama3-8B
// step took 9.1 s instead of 1.18 s when the monitor's 10 s wait expired in it
// (examples/torchtitan/README.md).
TEST(Threads, ATimedWaitThatExpiresInRealTimeMovesNoSimulatedTime)
{
    const auto single = RunMode("single");
    std::string output;
    EXPECT_EQ(RunMode("timer", "", &output), single);
    for (int rank = 0; rank < kRanks; ++rank)
    {
        const auto at = output.find(fmt::format("rank {} timer timed out ", rank));
        ASSERT_NE(at, std::string::npos) << output;
        int sem = 0;
        int polls = 0;
        int cvs = 0;
        ASSERT_EQ(std::sscanf(output.c_str() + at,
                              "rank %*d timer timed out %d times in sem_timedwait, %d times in "
                              "poll, %d times in a condition variable",
                              &sem, &polls, &cvs),
                  3)
            << output;
        // 300 ms of the main thread's sleeps and its waits for a token: 20 ms timeouts
        EXPECT_GE(sem, 3) << output;
        EXPECT_GE(polls, 3) << output;
        EXPECT_GE(cvs, 3) << output;
    }
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
