// Properties of whole runs: the simulated timeline does not depend on how fast the
// host runs each rank, and device memory is bounded as the scenario says.
#include "run_helpers.h"

#include <atomic>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

using namespace phantora::test;

namespace
{

std::string Scenario(int gpus, const std::string& memory)
{
    return fmt::format(R"(name = "props"
[gpu]
model = "H200"
memory = "{}"
launch_latency = "4us"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
[cpu]
time_scale = 0.0
call_overhead = "3us"
[topology]
kind = "switch"
gpus = {}
link_bandwidth = "400Gbps"
link_latency = "1us"
[kernels]
default = "10us"
[kernels.durations]
phantora_step_kernel = "40us"
)",
                       memory, gpus);
}

} // namespace

TEST(Determinism, RandomHostDelaysDoNotChangeTheSimulatedTimeline)
{
    // Simulated CPU time counts only the per-call overhead here (time_scale 0), so any
    // difference between runs could only come from the order in which the bridge
    // happened to receive the ranks' messages.  Three runs with random real sleeps in
    // every rank (optimistic synchronisation, the default), and one without sleeps under
    // conservative synchronisation, where the network never runs ahead: all four must
    // give the same bytes.
    const auto scenario = WriteFile("s.toml", Scenario(8, "141GiB"));
    // Every rank reads one NCCL id at once: ranks polling for rank 0's file would sleep
    // for as long as the host made them, and sleeps are simulated time.
    const auto id = WriteFile("id", std::string(128, 'p'));
    std::vector<std::string> signatures;
    std::vector<std::string> traces;
    for (int run = 0; run < 4; ++run)
    {
        const bool reference = run == 3;
        const auto report = ScratchDir() / fmt::format("report{}.json", run);
        const auto trace = ScratchDir() / fmt::format("trace{}.json", run);
        const CommandResult r = RunCommand(fmt::format(
            "PHANTORA_JITTER_US={} PHANTORA_EXAMPLE_ID_PRESET={} {} --scenario {} --nproc 8 "
            "--sync {} --report {} --trace {} -- {} 262144 4",
            reference ? 0 : 2000, id.string(), PHANTORA_CLUSTER, scenario.string(),
            reference ? "conservative" : "optimistic", report.string(), trace.string(),
            PHANTORA_CUDA_EXAMPLE));
        ASSERT_EQ(r.exitCode, 0) << r.output;
        const auto steps = StepTimesNs(r.output);
        ASSERT_EQ(steps.size(), 32U) << r.output;
        std::ifstream in(report);
        const auto j = nlohmann::json::parse(in);
        EXPECT_EQ(j["synchronisation"]["mode"], reference ? "conservative" : "optimistic");
        if (reference)
        {
            EXPECT_EQ(j["synchronisation"]["restores"], 0);
        }
        std::string sig;
        for (const auto& [key, ns] : steps)
        {
            sig += fmt::format("{}.{}={} ", key.first, key.second, ns);
        }
        for (const auto& rank : j["ranks"])
        {
            sig += fmt::format("end{}={} ", rank["rank"].get<int>(),
                               rank["simulated_time_ns"].get<int64_t>());
        }
        signatures.push_back(sig);
        std::ifstream t(trace);
        traces.emplace_back(std::istreambuf_iterator<char>(t), std::istreambuf_iterator<char>());
        // kernels, all-reduces and blocking calls of 8 ranks
        EXPECT_GT(traces.back().size(), 8U * 4U * 3U * 40U);
        // the ring's transfers, on the network's tracks
        EXPECT_NE(traces.back().find("gpu 7 -> gpu 0"), std::string::npos);
    }
    for (int run = 1; run < 4; ++run)
    {
        EXPECT_EQ(signatures[run], signatures[0]) << "run " << run;
        EXPECT_TRUE(traces[run] == traces[0]) << "the trace of run " << run << " differs";
    }
}

TEST(Determinism, CollectivesArrivingInTheNetworksPastAreReplayed)
{
    // Two halves of the world all-reduce at the same instant on split communicators.
    // With random host delays one half's all-reduce usually reaches the bridge after
    // the network has started the other's: a past event, replayed from a checkpoint.
    // Every run must give the trace of the conservative run, where nothing runs ahead.
    // Five ranks: the program leaves the last out, so each half has two members (with
    // four, one half is a single rank, whose in-place all-reduce NCCL runs no kernel for).
    const auto scenario = WriteFile("s.toml", Scenario(5, "141GiB"));
    std::string reference;
    uint64_t pastEvents = 0;
    uint64_t restores = 0;
    for (int run = 0; run < 4; ++run)
    {
        const bool conservative = run == 0;
        const auto report = ScratchDir() / fmt::format("split{}.json", run);
        const auto trace = ScratchDir() / fmt::format("split{}.trace.json", run);
        const CommandResult r = RunCommand(fmt::format(
            "PHANTORA_JITTER_US={} {} --scenario {} --nproc 5 --sync {} --report {} --trace {} "
            "-- {}",
            conservative ? 0 : 3000, PHANTORA_CLUSTER, scenario.string(),
            conservative ? "conservative" : "optimistic", report.string(), trace.string(),
            PHANTORA_NCCL_SPLIT_PROGRAM));
        ASSERT_EQ(r.exitCode, 0) << r.output;
        std::ifstream in(report);
        const auto j = nlohmann::json::parse(in);
        pastEvents += j["synchronisation"]["past_events"].get<uint64_t>();
        restores += j["synchronisation"]["restores"].get<uint64_t>();
        std::ifstream t(trace);
        const std::string text{std::istreambuf_iterator<char>(t), std::istreambuf_iterator<char>()};
        if (conservative)
        {
            EXPECT_EQ(pastEvents, 0U);
            reference = text;
            continue;
        }
        EXPECT_TRUE(text == reference) << "the trace of run " << run << " differs";
    }
    EXPECT_GT(pastEvents, 0U) << "no run had a past event: the test showed nothing";
    EXPECT_GT(restores, 0U);
}

TEST(DeviceMemory, AllocationsPastTheScenarioGpuFailAsOnARealOne)
{
    const auto scenario = WriteFile("s.toml", Scenario(1, "1GiB"));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_OOM_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find(
                  "allocated 4 blocks of 256 MiB, then cudaErrorMemoryAllocation: out of memory"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(fmt::format("last error {}, then 0", static_cast<int>(2))),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("after a free: cudaSuccess, then cudaErrorMemoryAllocation"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("1024.0 MiB"), std::string::npos) << "peak memory in the summary\n"
                                                              << r.output;
}

TEST(Determinism, AProgramWithNoRecordingRepeatsOnABusyMachine)
{
    // Host time on: the CUDA example is recorded in no profile, so its gaps come from the
    // host-time model of the committed H200 profile's programs ([cpu] host_model's
    // default for a scenario that names no profile).  A run with both cores kept busy by
    // this process's own spinning threads gives the same bytes as a quiet one: every
    // step, every rank's end, and the trace.
    std::string text = Scenario(8, "141GiB");
    text.replace(text.find("time_scale = 0.0"), 16, "time_scale = 1.0");
    const auto scenario = WriteFile("model.toml", text);
    const auto id = WriteFile("model-id", std::string(128, 'm'));
    std::vector<std::string> signatures;
    for (int run = 0; run < 2; ++run)
    {
        std::atomic<bool> stop{false};
        std::vector<std::thread> busy;
        for (int i = 0; run == 1 && i < 2; ++i)
        {
            busy.emplace_back(
                [&stop]
                {
                    volatile uint64_t x = 0;
                    while (!stop.load(std::memory_order_relaxed))
                    {
                        x = x + 1;
                    }
                });
        }
        const auto report = ScratchDir() / fmt::format("model{}.json", run);
        const CommandResult r = RunCommand(fmt::format(
            "PHANTORA_EXAMPLE_ID_PRESET={} {} --scenario {} --nproc 8 --report {} -- {} 262144 4",
            id.string(), PHANTORA_CLUSTER, scenario.string(), report.string(),
            PHANTORA_CUDA_EXAMPLE));
        stop = true;
        for (auto& t : busy)
        {
            t.join();
        }
        ASSERT_EQ(r.exitCode, 0) << r.output;
        EXPECT_NE(r.output.find("host time: model of"), std::string::npos) << r.output;
        std::ifstream in(report);
        const auto j = nlohmann::json::parse(in);
        std::string sig;
        for (const auto& [key, ns] : StepTimesNs(r.output))
        {
            sig += fmt::format("{}.{}={} ", key.first, key.second, ns);
        }
        for (const auto& rank : j["ranks"])
        {
            sig += fmt::format("end{}={} ", rank["rank"].get<int>(),
                               rank["simulated_time_ns"].get<int64_t>());
        }
        signatures.push_back(sig);
    }
    EXPECT_EQ(signatures[1], signatures[0]);
}
