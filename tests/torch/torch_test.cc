// The stock PyPI torch wheel, unmodified, under phantora-cluster on a machine
// with no GPU: device queries describe the scenario's GPU, timers read simulated
// time, the GPT example trains, its printed peak memory is the interposer's, and a
// rank whose script raises ends the run with its traceback.
#include "../e2e/run_helpers.h"

#include <atomic>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace phantora::test;

namespace
{

const std::string kScenario = std::string(PHANTORA_SOURCE_DIR) + "/scenarios/h200x4-nvlink.toml";
const std::string kExample = std::string(PHANTORA_SOURCE_DIR) + "/examples/torch/train_gpt.py";
// Small enough for a 2-core CI machine, large enough to exercise every kind of call.
const std::string kSmallModel = "--layers 2 --width 256 --heads 4 --seq 128 --batch 4 --vocab 4096";

CommandResult Simulate(int ranks, const std::string& script, const std::string& report = "",
                       const std::string& environment = "")
{
    return RunCommand(fmt::format(
        "{} {} --scenario {} --nproc {} {} -- {} {} 2>&1", environment, PHANTORA_CLUSTER, kScenario,
        ranks, report.empty() ? "" : "--report " + report, PHANTORA_TORCH_PYTHON, script));
}

/// "[rank R] key=value" lines of one rank.
std::map<std::string, std::string> KeyValues(const std::string& output, int rank)
{
    std::map<std::string, std::string> values;
    const std::regex line(fmt::format(R"(\[rank {}\] ([a-z_]+)=(.*))", rank));
    std::istringstream in(output);
    for (std::string l; std::getline(in, l);)
    {
        std::smatch m;
        if (std::regex_match(l, m, line))
        {
            values[m[1]] = m[2];
        }
    }
    return values;
}

nlohmann::json ReadJson(const std::string& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

} // namespace

TEST(Torch, DeviceQueriesDescribeTheScenarioGpuAndTimersReadSimulatedTime)
{
    const CommandResult r =
        Simulate(1, std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/device_queries.py");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    auto v = KeyValues(r.output, 0);
    EXPECT_EQ(v["available"], "True");
    EXPECT_EQ(v["device_count"], "4"); // the scenario's node has 4 GPUs
    EXPECT_EQ(v["name"], "NVIDIA H200");
    EXPECT_EQ(v["total_memory"], std::to_string(143771ULL << 20)); // memory = "143771MiB"
    EXPECT_EQ(v["mem_get_info_total"], v["total_memory"]);
    EXPECT_EQ(v["sm_count"], "132");
    EXPECT_EQ(v["capability"], "9.0");
    // Ten 4096^3 bf16 GEMMs take simulated GPU time; the host clock, read around a
    // synchronize, spans at least the events' interval.
    const double eventMs = std::stod(v.at("event_ms"));
    const double hostMs = std::stod(v.at("perf_counter_ms"));
    EXPECT_GT(eventMs, 0.0);
    EXPECT_GE(hostMs, eventMs * 0.999);
    // Device data is never materialised: a device-to-host read returns zeros.
    EXPECT_EQ(v["item"], "0.0");
    // torch's caching allocator runs on the virtual memory: a (32 MiB) result is live.
    EXPECT_GE(std::stoull(v.at("allocated")), 2ULL * 4096 * 4096 * 2);
}

TEST(Torch, AProfiledScriptRunsOnWithItsCpuOpsAndNoGpuActivity)
{
    const CommandResult r =
        Simulate(1, std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/profiled_step.py");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    auto v = KeyValues(r.output, 0);
    EXPECT_EQ(v["mm_calls"], "10") << r.output;
    EXPECT_EQ(v["gpu_events"], "0") << r.output;
    EXPECT_NE(r.output.find("GPU activity tracing is off in this rank"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("asked for by libcupti"), std::string::npos) << r.output;
}

TEST(Torch, GptExampleTrainsOnOneRankAndItsPeakMemoryIsTheSimulators)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r =
        Simulate(1, fmt::format("{} {} --steps 3", kExample, kSmallModel), report);
    ASSERT_EQ(r.exitCode, 0) << r.output;

    const std::regex stepLine(
        R"(\[rank 0\] step (\d+): ([0-9.]+) ms, ([0-9,]+) tokens/s, loss ([-0-9.]+))");
    std::vector<double> stepMs;
    for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), stepLine);
         it != std::sregex_iterator(); ++it)
    {
        EXPECT_EQ(std::stoi((*it)[1]), static_cast<int>(stepMs.size()));
        stepMs.push_back(std::stod((*it)[2]));
        EXPECT_EQ((*it)[4], "0.0000"); // loss.item() reads zeros
    }
    ASSERT_EQ(stepMs.size(), 3u) << r.output;
    for (double ms : stepMs)
    {
        EXPECT_GT(ms, 0.0);
    }

    std::smatch peak;
    ASSERT_TRUE(std::regex_search(
        r.output, peak,
        std::regex(R"(peak memory allocated (\d+) bytes .*, reserved (\d+) bytes)")))
        << r.output;
    const uint64_t allocated = std::stoull(peak[1]);
    const uint64_t reserved = std::stoull(peak[2]);
    EXPECT_GT(allocated, 0u);
    EXPECT_LE(allocated, reserved);
    // What torch reserved through cudaMalloc is exactly the rank's device-memory peak.
    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 1u);
    EXPECT_EQ(j["ranks"][0]["peak_device_bytes"].get<uint64_t>(), reserved);
    EXPECT_GT(j["ranks"][0]["kernels"].get<int>(), 100);
}

// FSDP2 (fully_shard) through init_process_group("nccl") and a real TCPStore
// rendezvous on the launcher's MASTER_ADDR/MASTER_PORT, on one rank.
TEST(Torch, GptExampleTrainsWithFsdpOnOneRank)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r =
        Simulate(1, fmt::format("{} {} --steps 3 --mode fsdp", kExample, kSmallModel), report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("[rank 0] step 2:"), std::string::npos) << r.output;
    std::smatch peak;
    ASSERT_TRUE(std::regex_search(r.output, peak, std::regex(R"(reserved (\d+) bytes)")))
        << r.output;
    const nlohmann::json j = ReadJson(report);
    EXPECT_EQ(j["ranks"][0]["peak_device_bytes"].get<uint64_t>(), std::stoull(peak[1]));
}

// DDP and FSDP2 across two and four ranks through ProcessGroupNCCL (with its watchdog
// and heartbeat threads) on the simulated NVLink network.  DDP's constructor
// all-gathers every rank's parameter shapes and reads them back (small buffers carry
// their real bytes), then each step all-reduces the gradient buckets; FSDP2 shards
// the parameters, all-gathers each block before its forward and backward and
// reduce-scatters its gradients.  Every rank's printed reserved peak is the report's.
struct Parallel
{
    const char* mode;
    int ranks;
};

void PrintTo(const Parallel& p, std::ostream* os)
{
    *os << p.mode << " on " << p.ranks << " ranks";
}

class TorchParallel : public ::testing::TestWithParam<Parallel>
{
};

TEST_P(TorchParallel, GptExampleTrainsAndEveryRanksPeakIsTheReports)
{
    const auto [mode, ranks] = GetParam();
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Simulate(
        ranks, fmt::format("{} {} --steps 3 --mode {}", kExample, kSmallModel, mode), report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), static_cast<std::size_t>(ranks));
    EXPECT_NE(r.output.find(fmt::format("mode {}, {} ranks on NVIDIA H200", mode, ranks)),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("[rank 0] step 2:"), std::string::npos)
        << r.output; // rank 0 logs steps
    for (int rank = 0; rank < ranks; ++rank)
    {
        std::smatch peak;
        const std::regex line(fmt::format(
            R"(\[rank {0}\] rank {0}: mean step ([0-9.]+) ms.*reserved (\d+) bytes)", rank));
        ASSERT_TRUE(std::regex_search(r.output, peak, line)) << r.output;
        EXPECT_GT(std::stod(peak[1]), 0.0);
        const nlohmann::json& mine = j["ranks"][rank];
        EXPECT_EQ(mine["peak_device_bytes"].get<uint64_t>(), std::stoull(peak[2]));
        // DDP: the constructor's checks, then at least one gradient all-reduce per
        // step; FSDP: an all-gather per sharded block in forward and backward and a
        // reduce-scatter per block in backward, every step
        const int atLeast = std::string(mode) == "ddp" ? 3 + 3 : 3 * 3;
        EXPECT_GE(mine["collectives"].get<int>(), atLeast) << mine.dump();
    }
}

INSTANTIATE_TEST_SUITE_P(Torch, TorchParallel,
                         ::testing::Values(Parallel{"ddp", 2}, Parallel{"ddp", 4},
                                           Parallel{"fsdp", 2}, Parallel{"fsdp", 4}),
                         [](const auto& info)
                         { return fmt::format("{}{}ranks", info.param.mode, info.param.ranks); });

// With expandable segments the allocator grows its segments through cuMemCreate /
// cuMemMap; the physical chunks are what the GPU's memory and its peak count.
TEST(Torch, ExpandableSegmentsGrowThroughTheDriversVirtualMemory)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r =
        Simulate(1, std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/expandable_segments.py",
                 report, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    auto v = KeyValues(r.output, 0);
    EXPECT_EQ(v["expandable"], "True") << r.output;
    const uint64_t mib = 1ULL << 20;
    // three 256 MiB tensors and one of 512 MiB are live
    EXPECT_EQ(std::stoull(v.at("allocated")), 3 * 256 * mib + 512 * mib);
    const uint64_t reserved = std::stoull(v.at("reserved"));
    EXPECT_GE(reserved, std::stoull(v.at("allocated")));
    // Nothing but the allocator's chunks uses the device.
    EXPECT_EQ(std::stoull(v.at("used")), reserved);
    const nlohmann::json j = ReadJson(report);
    EXPECT_EQ(j["ranks"][0]["peak_device_bytes"].get<uint64_t>(),
              std::stoull(v.at("max_reserved")));
}

TEST(Torch, ARankWhoseScriptRaisesEndsTheRunWithItsTraceback)
{
    const CommandResult r =
        Simulate(1, fmt::format("{} {} --steps 3 --fail-at-step 1", kExample, kSmallModel));
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("[rank 0] Traceback (most recent call last):"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("RuntimeError: deliberate failure at step 1"), std::string::npos)
        << r.output;
    // the first step ran; the failing one did not print
    EXPECT_NE(r.output.find("[rank 0] step 0:"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("[rank 0] step 1:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("rank 0 (pid"), std::string::npos) << r.output;
}

// torch.zeros(65536) on the CPU fills in parallel: libgomp starts a worker thread that
// then sleeps on a futex the interposer cannot intercept.  The bridge used to wait for
// that thread forever, so the collective on the copied buffer never completed (the run
// hung in the synchronize).  `timeout` turns such a hang into a failure.
TEST(Torch, ACollectiveOnABufferTheCpuFilledInParallelCompletes)
{
    const std::string script =
        std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/cpu_filled_collective.py";
    const CommandResult r = Simulate(2, script + " 65536 destroy", "", "timeout 240");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (int rank = 0; rank < 2; ++rank)
    {
        auto v = KeyValues(r.output, rank);
        EXPECT_EQ(v["synced"], "65536") << r.output;
    }
}

// A rank's first thread polling the TCPStore for a key another rank sets only after an
// all-reduce of both completed (as PyTorch passes the NCCL id of a communicator it creates
// lazily): it used to hold simulated time at its clock, before the all-reduce's end, so
// the other rank's synchronize was never answered and the run hung (TorchTitan's FSDP2 +
// TP on 4 ranks).  After a second of real time it now lets simulated time go on.
TEST(Torch, ARankWaitingInTheStoreForAnotherRanksKeyDoesNotHoldItsCollectiveBack)
{
    const std::string script =
        std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/store_wait_across_ranks.py";
    const CommandResult r = Simulate(2, script, "", "timeout 240");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("[rank 1] got=ready"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[rank 0] done"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[rank 1] done"), std::string::npos) << r.output;
}

// A helper thread's threading.Event.wait(0.2) timing out over and over (tqdm's monitor
// thread) while the main thread runs Python: each timeout expires in real time, and the
// GIL hands the helper's clock to the main thread.  The timeout used to move the helper's
// clock by 0.2 s, so the main thread's simulated time went on at the pace of real time
// (TorchTitan's Llama3-8B on 8 ranks: a step of 9.1 s instead of 1.18 s).  With CPU work free
// the main thread's loop now takes no simulated time.
TEST(Torch, AHelperThreadsTimedWaitsDoNotPaceTheMainThreadToRealTime)
{
    const std::string script =
        std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/monitor_thread_timeouts.py";
    const CommandResult r = RunCommand(
        fmt::format("timeout 240 {} --scenario {} --nproc 1 -- {} {} 2>&1", PHANTORA_CLUSTER,
                    WriteFile("cpu_free.toml",
                              fmt::format("extends = \"{}\"\n[cpu]\ntime_scale = 0\n", kScenario))
                        .string(),
                    PHANTORA_TORCH_PYTHON, script));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto values = KeyValues(r.output, 0);
    ASSERT_TRUE(values.count("timeouts") && values.count("elapsed_ms")) << r.output;
    EXPECT_GE(std::stoi(values.at("timeouts")), 5) << r.output;
    // before: at least 5 x 200 ms
    EXPECT_LT(std::stod(values.at("elapsed_ms")), 50.0) << r.output;
}

// Pipeline parallelism's shape exchange: an object pickled, its size and bytes sent over
// NCCL send/recv, the sizes summed and the slice's end added on the receiver by kernels.  The
// receiver used to read a size of 0 and the run ended on the send/recv size mismatch.
TEST(Torch, AnObjectSentOverSendRecvArrivesWhole)
{
    const std::string script =
        std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/object_lists_over_p2p.py";
    const CommandResult r = Simulate(2, script, "", "timeout 240");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (const char* batch : {"True", "False"})
    {
        EXPECT_NE(
            r.output.find(fmt::format(
                "[rank 1] got=('shapes', (8, 2048, 256), {}, {{'dtype': 'bfloat16'}})", batch)),
            std::string::npos)
            << r.output;
        EXPECT_NE(r.output.find(fmt::format("[rank 1] listed=[('again', {})]", batch)),
                  std::string::npos)
            << r.output;
    }
    EXPECT_NE(r.output.find("[rank 1] done"), std::string::npos) << r.output;
}

// Real NCCL only warns when a program exits without destroy_process_group().  Under the
// simulator ProcessGroupNCCL's destructor waited for its abort with a futex deadline on
// the simulated clock, which the host's kernel took as long past: it threw
// c10::DistBackendError ("Future for ProcessGroup abort timed out") and the rank aborted.
TEST(Torch, AScriptThatExitsWithoutDestroyingItsProcessGroupEndsCleanly)
{
    const std::string script =
        std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/cpu_filled_collective.py";
    const CommandResult r = Simulate(2, script + " 1024 keep", "", "timeout 240");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(r.output.find("DistBackendError"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[rank 0] done"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[rank 1] done"), std::string::npos) << r.output;
}

// Issue 33's determinism for a program nobody recorded: the GPT example copied under a file
// name no profile has a run of (so its host time is the host-time model of the committed
// H200 profile's programs, which the scenario does not name: [cpu] host_model's default),
// DDP on 4 ranks, once on a quiet machine and once with both cores kept busy by this
// process's own spinning threads.  Every step rank 0 prints and every rank's mean must be
// the same bytes: the model charges recorded figures, not this machine's CPU time.
TEST(Torch, AnUnrecordedDdpProgramGivesTheSameTimesOnABusyMachine)
{
    const auto copy = ScratchDir() / "unrecorded_gpt_copy.py";
    std::filesystem::copy_file(kExample, copy);
    const auto scenario = WriteFile(
        "host-model.toml", fmt::format("extends = [\"{}\"]\n[cpu]\ntime_scale = 1.0\n", kScenario));
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
        const auto report = ScratchDir() / fmt::format("unrecorded{}.json", run);
        const CommandResult r = RunCommand(fmt::format(
            "{} --scenario {} --nproc 4 --connect-timeout 600 --report {} -- {} {} {} --mode ddp "
            "--steps 3 2>&1",
            PHANTORA_CLUSTER, scenario.string(), report.string(), PHANTORA_TORCH_PYTHON,
            copy.string(), kSmallModel));
        stop = true;
        for (auto& t : busy)
        {
            t.join();
        }
        ASSERT_EQ(r.exitCode, 0) << r.output;
        EXPECT_NE(r.output.find("host time: model of"), std::string::npos) << r.output;
        std::string sig;
        const std::regex step(R"(\[rank (\d+)\] step (\d+): ([0-9.]+) ms)");
        int steps = 0;
        for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), step);
             it != std::sregex_iterator(); ++it, ++steps)
        {
            sig += fmt::format("r{}s{}={} ", (*it)[1].str(), (*it)[2].str(), (*it)[3].str());
        }
        EXPECT_EQ(steps, 3) << r.output; // rank 0 prints its steps; every rank its mean
        // Every rank's mean, by rank: the ranks' lines reach the launcher in any order.
        const std::regex mean(R"(\[rank (\d+)\] rank \d+: mean step ([0-9.]+) ms)");
        std::map<int, std::string> means;
        for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), mean);
             it != std::sregex_iterator(); ++it)
        {
            means[std::stoi((*it)[1])] = (*it)[2];
        }
        EXPECT_EQ(means.size(), 4u) << r.output;
        for (const auto& [rank, ms] : means)
        {
            sig += fmt::format("r{}mean={} ", rank, ms);
        }
        // Not the ranks' simulated ends: measured here, a quiet run ended at 2.942 s and a
        // busy one at 3.558 s with every step the same (time outside the steps is still
        // partly this machine's: issue 33, open).
        EXPECT_EQ(ReadJson(report.string())["ranks"].size(), 4u);
        signatures.push_back(sig);
    }
    EXPECT_EQ(signatures[1], signatures[0]);
}
