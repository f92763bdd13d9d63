// The bundled CUDA example end to end: real binary, real launcher, interposer,
// bridge and ns-3 network, no GPU.  Its printed step times must be exactly what
// the scenario's numbers imply.
#include "run_helpers.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

using namespace phantora::test;

namespace
{

constexpr int64_t kLaunchLatencyNs = 3000;
constexpr int64_t kKernelNs = 250000;
constexpr int64_t kLinkLatencyNs = 1000;
constexpr uint64_t kMtu = 4096;
constexpr uint64_t kHeader = 48;
constexpr uint64_t kElems = 1 << 20; // floats per rank: a 4 MiB all-reduce

std::string Scenario(int gpus, int gbps, const std::string& transport = "packet")
{
    return fmt::format(R"(name = "e2e"
[gpu]
model = "H200"
memory = "141GiB"
launch_latency = "{}ns"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
[cpu]
time_scale = 0.0
call_overhead = "0us"
[topology]
kind = "switch"
gpus = {}
link_bandwidth = "{}Gbps"
link_latency = "{}ns"
[network]
transport = "{}"
mtu = {}
header_bytes = {}
[kernels]
default = "1us"
[kernels.durations]
phantora_step_kernel = "{}ns"
# NCCL reduced to the textbook ring, so that RingAllReducePs() below is exact: one
# channel, one chunk per step, no protocol latency, no per-channel copy limit.
[nccl]
algorithm = "ring"
protocol = "simple"
min_channels = 1
max_channels = 1
chunk_bytes = "1GiB"
simple_base_latency = "0ns"
simple_step_latency = "0ns"
simple_channel_bandwidth = "1000000TB/s"
)",
                       kLaunchLatencyNs, gpus, gbps, kLinkLatencyNs, transport, kMtu, kHeader,
                       kKernelNs);
}

/// Picoseconds to serialise \p bytes at \p gbps (exact for the rates used here).
int64_t TxPs(uint64_t bytes, int gbps)
{
    return static_cast<int64_t>(bytes * 8 * 1000 / static_cast<uint64_t>(gbps));
}

/// The ring all-reduce time the packet model implies on a one-switch star: 2(n-1)
/// steps, each a chunk of B/n bytes in MTU packets over two store-and-forward hops.
/// The second hop adds the largest packet's time: a short last packet reaches the
/// switch while the full packet ahead of it is still leaving, and queues behind it.
int64_t RingAllReducePs(int n, uint64_t bytes, int gbps)
{
    const uint64_t chunk = (bytes + n - 1) / n;
    const uint64_t payload = kMtu - kHeader;
    const uint64_t packets = chunk == 0 ? 1 : (chunk + payload - 1) / payload;
    const uint64_t lastPayload = chunk - (packets - 1) * payload;
    const int64_t firstHop = static_cast<int64_t>(packets - 1) * TxPs(payload + kHeader, gbps) +
                             TxPs(lastPayload + kHeader, gbps);
    const uint64_t largest = std::min(kMtu, chunk + kHeader);
    const int64_t step = firstHop + TxPs(largest, gbps) + 2 * kLinkLatencyNs * 1000;
    return 2 * (n - 1) * step;
}

int64_t ExpectedStepNs(int n, int gbps)
{
    const int64_t ps = RingAllReducePs(n, kElems * 4, gbps);
    return kLaunchLatencyNs + kKernelNs + (ps + 999) / 1000;
}

struct RunResult
{
    CommandResult cmd;
    std::map<std::pair<int, int>, int64_t> steps;
    nlohmann::json report;
};

RunResult Simulate(int n, int gbps, const std::string& transport = "packet")
{
    const auto scenario =
        WriteFile(fmt::format("switch-{}-{}.toml", n, gbps), Scenario(n, gbps, transport));
    const auto report = ScratchDir() / "report.json";
    const auto idFile = ScratchDir() / "nccl.id";
    RunResult r;
    r.cmd = RunCommand(fmt::format(
        "PHANTORA_EXAMPLE_ID_FILE={} {} --scenario {} --nproc {} --report {} -- {} {} 3",
        idFile.string(), PHANTORA_CLUSTER, scenario.string(), n, report.string(),
        PHANTORA_CUDA_EXAMPLE, kElems));
    r.steps = StepTimesNs(r.cmd.output);
    std::ifstream in(report);
    if (in)
    {
        r.report = nlohmann::json::parse(in);
    }
    return r;
}

class CudaExample : public ::testing::TestWithParam<int>
{
};

} // namespace

TEST_P(CudaExample, StepTimeIsWhatTheScenarioImplies)
{
    const int n = GetParam();
    const RunResult r = Simulate(n, 400);
    ASSERT_EQ(r.cmd.exitCode, 0) << r.cmd.output;
    ASSERT_EQ(r.steps.size(), static_cast<std::size_t>(3 * n)) << r.cmd.output;
    const int64_t expected = ExpectedStepNs(n, 400);
    // The example's cudaMemset runs on the legacy default stream, so its step stream (a
    // blocking stream) starts after it: step 0 includes the memset, at HBM speed.
    const auto memsetNs = static_cast<int64_t>(std::llround(kElems * 4 * 8 / (4.8e12 * 8) * 1e9));
    for (const auto& [key, ns] : r.steps)
    {
        EXPECT_EQ(ns, expected + (key.second == 0 ? memsetNs : 0))
            << "rank " << key.first << " step " << key.second;
    }
    ASSERT_TRUE(r.report.contains("ranks")) << r.cmd.output;
    ASSERT_EQ(r.report["ranks"].size(), static_cast<std::size_t>(n));
    EXPECT_GT(r.report["wall_time_s"].get<double>(), 0.0);
    for (const auto& rank : r.report["ranks"])
    {
        // every rank ran 3 steps after init: at least 3 step times of simulated time
        EXPECT_GE(rank["simulated_time_s"].get<double>(), 3 * expected * 1e-9);
        EXPECT_EQ(rank["kernels"].get<int>(), 3);
        EXPECT_EQ(rank["collectives"].get<int>(), 3);
        EXPECT_EQ(rank["peak_device_bytes"].get<uint64_t>(), kElems * 4);
    }
    EXPECT_EQ(r.report["kernels"]["defaulted"].get<int>(), 0);
}

TEST_P(CudaExample, HalvingTheLinkBandwidthMovesTheStepAsTheModelSays)
{
    const int n = GetParam();
    const RunResult fast = Simulate(n, 400);
    const RunResult slow = Simulate(n, 200);
    ASSERT_EQ(fast.cmd.exitCode, 0) << fast.cmd.output;
    ASSERT_EQ(slow.cmd.exitCode, 0) << slow.cmd.output;
    const int64_t fastNs = fast.steps.at({0, 1});
    const int64_t slowNs = slow.steps.at({0, 1});
    EXPECT_EQ(slowNs, ExpectedStepNs(n, 200));
    // Serialisation doubles, latency and compute do not.
    const int64_t serialFast =
        fastNs - kLaunchLatencyNs - kKernelNs - 2 * (n - 1) * 2 * kLinkLatencyNs;
    const int64_t serialSlow =
        slowNs - kLaunchLatencyNs - kKernelNs - 2 * (n - 1) * 2 * kLinkLatencyNs;
    EXPECT_NEAR(static_cast<double>(serialSlow), 2.0 * static_cast<double>(serialFast), 2.0);
    std::printf("n=%d: step %.3f us at 400 Gb/s, %.3f us at 200 Gb/s\n", n, fastNs / 1e3,
                slowNs / 1e3);
}

INSTANTIATE_TEST_SUITE_P(Ranks, CudaExample, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

// A rank's command may be a wrapper (a shell, `time`, a container runtime) whose child
// is the program: ranks then are not the launcher's children, and a rank that waits
// long for a late peer must still be served, with the step times unchanged.
TEST(CudaExample, RanksStartedThroughAWrapperWaitForALatePeer)
{
    const auto scenario = WriteFile("s.toml", Scenario(2, 400));
    const auto idFile = ScratchDir() / "nccl.id";
    // rank 1 starts 2 s late, so rank 0 waits at communicator creation for longer than
    // the interposer's 0.5 s check of whether the launcher still lives
    const CommandResult r = RunCommand(fmt::format(
        "PHANTORA_EXAMPLE_ID_FILE={} {} --scenario {} --nproc 2 -- /bin/sh -c "
        "'test $RANK = 1 && sleep 2; {} {} 3; exit $?'",
        idFile.string(), PHANTORA_CLUSTER, scenario.string(), PHANTORA_CUDA_EXAMPLE, kElems));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto steps = StepTimesNs(r.output);
    ASSERT_EQ(steps.size(), 6u) << r.output;
    EXPECT_EQ(steps.at({0, 2}), ExpectedStepNs(2, 400)) << r.output;
    EXPECT_EQ(steps.at({1, 2}), ExpectedStepNs(2, 400)) << r.output;
}

TEST(CudaExampleFailures, ACrashingRankIsNamed)
{
    // Rank 1's program fails, rank 0's succeeds: the launcher names rank 1, its exit
    // status and its last stderr lines.
    const auto scenario = WriteFile("s.toml", Scenario(2, 400));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 2 -- /bin/sh -c "
                               "'echo about to fail >&2; test $RANK = 1 && exit 3; exit 0'",
                               PHANTORA_CLUSTER, scenario.string()));
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.output.find("rank 1 (pid"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("about to fail"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("exited with status 3"), std::string::npos) << r.output;
}

TEST(CudaExampleFailures, BadScenarioIsRefusedBeforeAnyRankStarts)
{
    const auto scenario = WriteFile("bad.toml", "[gpu]\nmodel = 3\n");
    const CommandResult r = RunCommand(
        fmt::format("{} --scenario {} -- /bin/true", PHANTORA_CLUSTER, scenario.string()));
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.output.find("bad.toml"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("gpu.model"), std::string::npos) << r.output;
}

TEST(CudaExampleFailures, ANumberFlagOutOfRangeSaysWhatWasExpected)
{
    // phantora-cluster's and phantora-rank's number flags name the flag, what they expect
    // and what they got (not the range of a double), before anything starts.
    const CommandResult cluster =
        RunCommand(fmt::format("{} --nproc 0 -- /bin/true", PHANTORA_CLUSTER));
    EXPECT_NE(cluster.exitCode, 0);
    EXPECT_NE(cluster.output.find("--nproc: expected a number greater than 0, got \"0\""),
              std::string::npos)
        << cluster.output;
    const CommandResult rank = RunCommand(fmt::format(
        "{} --connect tcp://127.0.0.1:1 --bridge-timeout soon -- /bin/true", PHANTORA_RANK));
    EXPECT_NE(rank.exitCode, 0);
    EXPECT_NE(rank.output.find("--bridge-timeout: expected a number greater than 0, got \"soon\""),
              std::string::npos)
        << rank.output;
}

TEST(CudaExampleFailures, AnUnimplementedCallEndsTheRankWithItsName)
{
    const auto scenario = WriteFile("s.toml", Scenario(1, 400));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_UNIMPLEMENTED_CALL));
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.output.find("rank 0 (pid"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("cudaGraphicsMapResources is not implemented"), std::string::npos)
        << r.output;
    // the program's own code after the call never ran
    EXPECT_EQ(r.output.find("after the call"), std::string::npos) << r.output;
}

// MASTER_PORT: the caller's if set; else one port for every rank, free at launch and
// outside the kernel's ephemeral range (a port from there could become some other
// connection's source port before rank 0 listens on it).
TEST(Launcher, MasterPortIsTheCallersOrOneFreePortOutsideTheEphemeralRange)
{
    const auto scenario = WriteFile("s.toml", Scenario(2, 400));
    const auto ports = [](const std::string& output)
    {
        std::vector<int> found;
        const std::regex line(R"(\[rank [01]\] port=(\d+))");
        for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
             it != std::sregex_iterator(); ++it)
        {
            found.push_back(std::stoi((*it)[1]));
        }
        return found;
    };
    const std::string printPort = "-- /bin/sh -c 'echo port=$MASTER_PORT'";
    const CommandResult chosen =
        RunCommand(fmt::format("env -u MASTER_PORT {} --scenario {} --nproc 2 {}", PHANTORA_CLUSTER,
                               scenario.string(), printPort));
    ASSERT_EQ(chosen.exitCode, 0) << chosen.output;
    const std::vector<int> p = ports(chosen.output);
    ASSERT_EQ(p.size(), 2u) << chosen.output;
    EXPECT_EQ(p[0], p[1]) << chosen.output;
    int low = 0;
    int high = 0;
    std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
    ASSERT_GT(low, 0);
    EXPECT_TRUE(p[0] < low || p[0] > high) << p[0] << " in " << low << "-" << high;

    const CommandResult given =
        RunCommand(fmt::format("MASTER_PORT=23456 {} --scenario {} --nproc 2 {}", PHANTORA_CLUSTER,
                               scenario.string(), printPort));
    ASSERT_EQ(given.exitCode, 0) << given.output;
    EXPECT_EQ(ports(given.output), (std::vector<int>{23456, 23456})) << given.output;
}

// The bridge's own lines (start, summary, request statistics, trace) fit 160 characters,
// even with a scenario and a trace file in folders deep enough to make them longer: the
// run summary's `bridge:` line once ran to 227.  Ranks' own lines are the program's.
TEST(CudaExample, NoLineTheBridgePrintsIsWiderThan160Characters)
{
    std::filesystem::path deep = ScratchDir();
    for (int i = 0; i < 6; ++i)
    {
        deep /= "a-folder-name-long-enough-to-make-every-path-in-the-summary-wrap";
    }
    std::filesystem::create_directories(deep);
    const std::filesystem::path scenario = deep / "two-gpus-on-one-switch.toml";
    std::ofstream(scenario) << SwitchScenario(2);
    const CommandResult r = RunCommand(fmt::format(
        "{} --scenario {} --nproc 2 --trace {} --report {} 2>&1", PHANTORA_CLUSTER,
        scenario.string(), (deep / "trace.json").string(), (deep / "report.json").string()));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    std::istringstream in(r.output);
    int checked = 0;
    for (std::string line; std::getline(in, line);)
    {
        if (line.rfind("[rank ", 0) == 0)
        {
            continue;
        }
        ++checked;
        EXPECT_LE(line.size(), 160u) << line;
    }
    // the start, the table, kernels, host time, band, network, synchronisation, wall, bridge
    EXPECT_GE(checked, 12) << r.output;
    EXPECT_NE(r.output.find("bridge: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(" spans in"), std::string::npos) << r.output; // wrapped, not cut
}
