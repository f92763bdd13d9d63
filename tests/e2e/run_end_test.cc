// A run that ends early still leaves its report and its trace: what was simulated until
// the end, marked incomplete with the reason, and an exit status that says which end it
// was (engine/simulation_error.h): a signal (SIGTERM, SIGINT), a rank that crashed, a
// deadlock, a rank that never connected (a timeout).
#include "run_helpers.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

using namespace phantora::test;

namespace
{

std::string ReadText(const std::filesystem::path& file)
{
    std::ifstream in(file);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Waits up to 60 s until \p file holds \p text.
bool WaitForText(const std::filesystem::path& file, const std::string& text)
{
    for (int i = 0; i < 1200; ++i)
    {
        if (ReadText(file).find(text) != std::string::npos)
        {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

struct Outputs
{
    std::filesystem::path report;
    std::filesystem::path trace;
};

Outputs OutputFiles()
{
    return {ScratchDir() / "report.json", ScratchDir() / "trace.json"};
}

/// The report and the trace parse, say the run is incomplete, name \p end and carry
/// \p reason; the ranks' simulated time up to the end is there.
void ExpectIncomplete(const Outputs& out, const std::string& end, const std::string& reason,
                      int ranks)
{
    std::ifstream reportIn(out.report);
    ASSERT_TRUE(reportIn) << "no report was written";
    const nlohmann::json report = nlohmann::json::parse(reportIn);
    EXPECT_EQ(report["complete"], false);
    EXPECT_EQ(report["ok"], false);
    EXPECT_EQ(report["end"], end);
    EXPECT_NE(report["incomplete_reason"].get<std::string>().find(reason), std::string::npos)
        << report["incomplete_reason"];
    ASSERT_EQ(report["ranks"].size(), static_cast<std::size_t>(ranks));
    EXPECT_GT(report["ranks"][0]["simulated_time_ns"].get<int64_t>(), 0);

    std::ifstream traceIn(out.trace);
    ASSERT_TRUE(traceIn) << "no trace was written";
    const nlohmann::json trace = nlohmann::json::parse(traceIn);
    EXPECT_EQ(trace["metadata"]["complete"], false);
    EXPECT_EQ(trace["metadata"]["end"], end);
    EXPECT_NE(trace["metadata"]["incomplete_reason"].get<std::string>().find(reason),
              std::string::npos);
    bool marker = false;
    for (const auto& e : trace["traceEvents"])
    {
        marker = marker || e["name"] == "simulation ended early: " + end;
    }
    EXPECT_TRUE(marker) << "the trace has no marker where the simulation stopped";
}

/// Runs 2 ranks of the CUDA example for longer than any test, sends phantora-cluster
/// \p signal once rank 1 has made steps, and checks its end: exit status 128 + signal, an
/// incomplete report and trace naming the signal.
void ExpectSignalEnds(int signal)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(2));
    const auto pidFile = ScratchDir() / "cluster.pid";
    const auto log = ScratchDir() / "run.log";
    const Outputs out = OutputFiles();
    // steps enough to run for half a minute (about 800 a second here): the signal ends it
    // long before, and a failed assertion does not leave it running for hours
    auto run = std::async(std::launch::async,
                          [&]
                          {
                              return RunCommand(fmt::format(
                                  "sh -c 'echo $$ > {}; exec {} --scenario {} --nproc 2 --report "
                                  "{} --trace {} -- {} 65536 20000 > {} 2>&1'",
                                  pidFile.string(), PHANTORA_CLUSTER, scenario.string(),
                                  out.report.string(), out.trace.string(), PHANTORA_CUDA_EXAMPLE,
                                  log.string()));
                          });
    ASSERT_TRUE(WaitForText(log, "rank 1 step 2 ")) << ReadText(log);
    int pid = 0;
    std::ifstream(pidFile) >> pid;
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, signal), 0);
    ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready)
        << "phantora-cluster did not end after signal " << signal;
    const CommandResult r = run.get();
    const std::string output = ReadText(log);
    EXPECT_EQ(r.exitCode, 128 + signal) << output;
    EXPECT_NE(
        output.find(fmt::format("the run ended early (interrupted, exit status {})", 128 + signal)),
        std::string::npos)
        << output;
    ExpectIncomplete(out, "interrupted", fmt::format("interrupted by signal {}", signal), 2);
}

} // namespace

TEST(RunEnd, SigtermWritesAnIncompleteReportAndTraceAndExits143)
{
    ExpectSignalEnds(SIGTERM);
}

TEST(RunEnd, SigintWritesAnIncompleteReportAndTraceAndExits130)
{
    ExpectSignalEnds(SIGINT);
}

TEST(RunEnd, ARankThatNeverConnectsLeavesAnIncompleteReportAndExits5)
{
    // rank 1 never makes a CUDA call; rank 0 runs until NCCL's set-up waits for it
    const auto scenario = WriteFile("s.toml", SwitchScenario(2));
    const auto program = WriteFile(
        "rank.sh", fmt::format("#!/bin/sh\n[ \"$RANK\" = 1 ] && exec sleep 100\nexec {} 65536 4\n",
                               PHANTORA_CUDA_EXAMPLE));
    std::filesystem::permissions(program, std::filesystem::perms::owner_exec,
                                 std::filesystem::perm_options::add);
    const Outputs out = OutputFiles();
    const CommandResult r = RunCommand(fmt::format(
        "PHANTORA_EXAMPLE_ID_FILE={} timeout 120 {} --scenario {} --nproc 2 --connect-timeout 3 "
        "--report {} --trace {} -- {} 2>&1",
        (ScratchDir() / "nccl.id").string(), PHANTORA_CLUSTER, scenario.string(),
        out.report.string(), out.trace.string(), program.string()));
    EXPECT_EQ(r.exitCode, 5) << r.output;
    ExpectIncomplete(out, "timeout", "ranks 1 have not made a CUDA call within 3 s", 2);
}

TEST(RunEnd, ARankThatCrashesLeavesAnIncompleteReportAndExits3)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(2));
    const auto log = ScratchDir() / "run.log";
    const auto marker = ScratchDir() / "nccl.id";
    const Outputs out = OutputFiles();
    auto run = std::async(
        std::launch::async,
        [&]
        {
            return RunCommand(fmt::format(
                "PHANTORA_EXAMPLE_ID_FILE={} {} --scenario {} --nproc 2 --report {} --trace {} "
                "-- {} 65536 20000 > {} 2>&1",
                marker.string(), PHANTORA_CLUSTER, scenario.string(), out.report.string(),
                out.trace.string(), PHANTORA_CUDA_EXAMPLE, log.string()));
        });
    ASSERT_TRUE(WaitForText(log, "rank 1 step 2 ")) << ReadText(log);
    const std::vector<int> pids =
        ProcessesWithEnvironment({"PHANTORA_EXAMPLE_ID_FILE=" + marker.string(), "RANK=1"});
    ASSERT_EQ(pids.size(), 1u) << "rank 1 not found";
    const int victim = pids.front();
    ASSERT_EQ(::kill(victim, SIGSEGV), 0);
    ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready)
        << "phantora-cluster did not end after a rank crashed";
    const CommandResult r = run.get();
    const std::string output = ReadText(log);
    EXPECT_EQ(r.exitCode, 3) << output;
    ExpectIncomplete(out, "rank_failed", fmt::format("rank 1 (pid {})", victim), 2);
}

TEST(RunEnd, ADeadlockLeavesAnIncompleteReportAndExits4)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(2));
    const Outputs out = OutputFiles();
    const CommandResult r = RunCommand(fmt::format(
        "timeout 120 {} --scenario {} --nproc 2 --report {} --trace {} -- {} unmatched 2>&1",
        PHANTORA_CLUSTER, scenario.string(), out.report.string(), out.trace.string(),
        PHANTORA_P2P_PROGRAM));
    EXPECT_EQ(r.exitCode, 4) << r.output;
    ExpectIncomplete(out, "deadlock", "deadlock", 2);
}
