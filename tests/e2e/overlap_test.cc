// Compute/communication overlap through streams and events gives exactly the
// span the timeline rules imply.
#include "run_helpers.h"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

using namespace phantora::test;

namespace
{

constexpr int64_t kA = 300000;
constexpr int64_t kC = 50000;

/// The test's kernels stand for no particular memory traffic: memory sharing is off
/// (hbm_share.h), so the spans are the stream and event rules alone.
std::string Scenario(int64_t bNs)
{
    return fmt::format(R"(name = "overlap"
[gpu]
model = "H200"
memory = "141GiB"
launch_latency = "4us"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
comm_rate_beside_memory_bound = 1.0
[cpu]
time_scale = 0.0
[topology]
kind = "switch"
gpus = 2
link_bandwidth = "400Gbps"
link_latency = "1us"
[kernels]
default = "1us"
[kernels.durations]
overlap_a = "{}ns"
overlap_b = "{}ns"
overlap_c = "{}ns"
)",
                       kA, bNs, kC);
}

/// rank 0's span in ns, and what its queries said.
struct Span
{
    int64_t ns{-1};
    std::string before;
    std::string after;
};

Span SimulateSpan(int64_t bNs, const char* mode)
{
    const auto scenario = WriteFile(fmt::format("b{}.toml", bNs), Scenario(bNs));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 2 -- {} {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_OVERLAP_PROGRAM, mode));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    static const std::regex line(
        R"(\[rank 0\] rank 0 \w+ span ([0-9.]+) us \(query before sync: ([a-z ]+), after: ([a-z ]+)\))");
    std::smatch m;
    Span s;
    if (std::regex_search(r.output, m, line))
    {
        s.ns = std::llround(std::stod(m[1]) * 1000.0);
        s.before = m[2];
        s.after = m[3];
    }
    EXPECT_GE(s.ns, 0) << r.output;
    return s;
}

} // namespace

TEST(Overlap, AllReduceHidesBehindALongerKernelOnAnotherStream)
{
    const int64_t bLong = 400000;
    const Span serial = SimulateSpan(bLong, "serial");
    const Span overlap = SimulateSpan(bLong, "overlap");
    // serial: A, the all-reduce, B, C one after another
    const int64_t allReduce = serial.ns - kA - bLong - kC;
    ASSERT_GT(allReduce, 0);
    ASSERT_LT(allReduce, bLong) << "the test needs B longer than the all-reduce";
    // overlapped: the all-reduce runs during B and costs nothing
    EXPECT_NEAR(static_cast<double>(overlap.ns), static_cast<double>(kA + bLong + kC), 1.0);
    EXPECT_EQ(overlap.before, "not ready");
    // the trace shows the all-reduce on the communication stream during kernel B
    const auto trace = ScratchDir() / "overlap.json";
    ASSERT_EQ(
        RunCommand(fmt::format("{} --scenario {} --nproc 2 --trace {} -- {} overlap",
                               PHANTORA_CLUSTER, WriteFile("t.toml", Scenario(bLong)).string(),
                               trace.string(), PHANTORA_OVERLAP_PROGRAM))
            .exitCode,
        0);
    std::ifstream in(trace);
    const auto j = nlohmann::json::parse(in);
    double bStart = -1, arStart = -2;
    for (const auto& e : j["traceEvents"])
    {
        if (e["ph"] == "X" && e["pid"] == 0)
        {
            const std::string name = e["name"];
            if (name.rfind("overlap_b", 0) == 0)
            {
                bStart = e["ts"];
            }
            if (name.rfind("all_reduce", 0) == 0)
            {
                arStart = e["ts"];
            }
        }
    }
    EXPECT_DOUBLE_EQ(arStart, bStart) << "all-reduce and kernel B start together after A";
    EXPECT_EQ(overlap.after, "ready");
    std::printf("all-reduce %.3f us; serial span %.3f us, overlapped %.3f us\n", allReduce / 1e3,
                serial.ns / 1e3, overlap.ns / 1e3);
}

TEST(Overlap, AShortKernelLeavesTheAllReduceOnTheCriticalPath)
{
    const int64_t bShort = 10000;
    const Span serial = SimulateSpan(bShort, "serial");
    const Span overlap = SimulateSpan(bShort, "overlap");
    const int64_t allReduce = serial.ns - kA - bShort - kC;
    ASSERT_GT(allReduce, bShort);
    // C waits for the all-reduce, which started right after A
    EXPECT_NEAR(static_cast<double>(overlap.ns), static_cast<double>(kA + allReduce + kC), 1.0);
}
