// A rank's request that never reaches the bridge, and a run interrupted while the
// bridge is busy receiving: each must end the run promptly with a message naming what
// it waited for, never hang.  The bounds below are generous, not benchmarks.
#include "run_helpers.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <thread>

using namespace phantora::test;

namespace
{

std::string Tail(const std::string& s)
{
    return s.substr(s.size() > 6000 ? s.size() - 6000 : 0);
}

double SecondsSince(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

TEST(OrderGap, ALostRequestOfAThreadEndsTheRunNamingIt)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(1));
    const CommandResult r =
        RunCommand(fmt::format("timeout 60 {} --scenario {} --nproc 1 -- {} skip-seq",
                               PHANTORA_CLUSTER, scenario.string(), PHANTORA_ORDER_GAP_PROGRAM));
    EXPECT_EQ(r.exitCode, 1) << Tail(r.output);
    EXPECT_NE(r.output.find("rank 0: thread 0's request 4 (HostEvent, order number 2) came after "
                            "its request 2: request 3 of that thread was lost on the way"),
              std::string::npos)
        << Tail(r.output);
}

TEST(OrderGap, AMissingOrderNumberEndsTheRunNamingTheRankTheNumberAndItsSender)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(1));
    const auto started = std::chrono::steady_clock::now();
    const CommandResult r = RunCommand(
        fmt::format("timeout 60 {} --scenario {} --nproc 1 --order-gap-timeout 2 -- {} gap",
                    PHANTORA_CLUSTER, scenario.string(), PHANTORA_ORDER_GAP_PROGRAM));
    const double seconds = SecondsSince(started);
    EXPECT_EQ(r.exitCode, 5) << Tail(r.output); // a timeout (engine/simulation_error.h)
    EXPECT_LT(seconds, 30.0);
    EXPECT_NE(r.output.find("order-gap: order number 2 left out"), std::string::npos)
        << Tail(r.output);
    // thread 0's last request (its hello, number 0) came before 2: it could have sent it;
    // thread 1's came after (5), so it did not
    EXPECT_NE(r.output.find("for its request with order number 2, which has not reached the "
                            "bridge; 3 later requests of it are held (order numbers 3 to 5); "
                            "sent by one of the threads whose last request came before it: "
                            "thread 0 (its request 1, Hello, order number 0)"),
              std::string::npos)
        << Tail(r.output);
    EXPECT_NE(r.output.find("--order-gap-timeout"), std::string::npos) << Tail(r.output);
}

TEST(OrderGap, SigtermEndsABusyRunWithinSecondsSayingWhatItWaitedFor)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(1));
    const auto pidFile = ScratchDir() / "cluster.pid";
    const auto log = ScratchDir() / "run.log";
    // The gap is never reported by itself here (10 minutes): only the signal ends the run.
    auto run = std::async(
        std::launch::async,
        [&]
        {
            return RunCommand(fmt::format(
                "sh -c 'echo $$ > {}; exec {} --scenario {} --nproc 1 --order-gap-timeout 600 "
                "-- {} flood 2>&1' | tee {}",
                pidFile.string(), PHANTORA_CLUSTER, scenario.string(), PHANTORA_ORDER_GAP_PROGRAM,
                log.string()));
        });
    bool flooding = false;
    for (int i = 0; i < 600 && !flooding; ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::ifstream in(log);
        const std::string text((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        flooding = text.find("order-gap: flooding") != std::string::npos;
    }
    ASSERT_TRUE(flooding) << "the flooding rank never started";
    std::this_thread::sleep_for(std::chrono::milliseconds(1500)); // the bridge is busy now
    int pid = 0;
    std::ifstream(pidFile) >> pid;
    ASSERT_GT(pid, 0);
    const auto signalled = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready)
        << "phantora-cluster did not end after SIGTERM";
    const double seconds = SecondsSince(signalled);
    const CommandResult r = run.get();
    EXPECT_LT(seconds, 10.0) << Tail(r.output);
    EXPECT_NE(r.output.find("simulation failed: interrupted by signal 15; waiting for requests:"),
              std::string::npos)
        << Tail(r.output);
    EXPECT_NE(r.output.find("rank 0 (pid "), std::string::npos) << Tail(r.output);
    EXPECT_NE(r.output.find("for its request with order number 6"), std::string::npos)
        << Tail(r.output);
    // the rank was ended with the run
    const auto at = r.output.find("order-gap: pid ");
    ASSERT_NE(at, std::string::npos) << Tail(r.output);
    const int rankPid = std::atoi(r.output.c_str() + at + 15);
    ASSERT_GT(rankPid, 0);
    EXPECT_FALSE(std::filesystem::exists(fmt::format("/proc/{}", rankPid)))
        << "rank process " << rankPid << " outlived the run";
    std::printf("phantora-cluster ended %.3f s after SIGTERM\n", seconds);
}
