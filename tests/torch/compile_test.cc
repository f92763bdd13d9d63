// torch.compile under phantora-cluster with no GPU (issue 34): Inductor's compile workers
// and Triton's compiler run beside the ranks (interposer/process_role.h), Triton compiles
// for the scenario's GPU on the CPU, and its kernels load and launch through the driver
// API, each an op timed from the profile or estimated from the bytes it moves.
#include "../e2e/run_helpers.h"
#include "framework_checks.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

using namespace phantora::test;

namespace
{

const std::string kSource = PHANTORA_SOURCE_DIR;
const std::string kScenario = kSource + "/scenarios/h200x4-nvlink-profiled.toml";

CommandResult Simulate(int ranks, const std::string& script, const std::string& flags)
{
    return RunCommand(fmt::format("{} --scenario {} --nproc {} {} -- {} {}/tests/torch/{} 2>&1",
                                  PHANTORA_CLUSTER, kScenario, ranks, flags, PHANTORA_TORCH_PYTHON,
                                  kSource, script));
}

/// Rank \p rank's "step N ms X" times.
std::vector<double> StepMs(const std::string& output, int rank)
{
    const std::regex line(fmt::format(R"(\[rank {}\] step \d+ ms ([0-9.]+))", rank));
    std::vector<double> ms;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
         it != std::sregex_iterator(); ++it)
    {
        ms.push_back(std::stod((*it)[1]));
    }
    return ms;
}

/// Launches of Inductor's Triton kernels among the estimated ops of a --missing file, and
/// how many of them were estimated from the bytes they move.
std::pair<uint64_t, uint64_t> TritonLaunches(const nlohmann::json& missing)
{
    uint64_t launches = 0, fromBytes = 0;
    for (const auto& op : missing["ops"])
    {
        const std::string name = op.value("name", "");
        if (name.rfind("triton_poi_", 0) == 0 || name.rfind("triton_per_", 0) == 0 ||
            name.rfind("triton_red_", 0) == 0)
        {
            launches += op["launches"].get<uint64_t>();
            fromBytes += op["estimate"] == "bytes" ? op["launches"].get<uint64_t>() : 0;
        }
    }
    return {launches, fromBytes};
}

} // namespace

// One rank: the MLP's forward and backward are Triton kernels (the profile has none of
// them: each is estimated from its buffers and sizes), its GEMMs cuBLAS's.  The first
// step holds the compilation; the others are steady.
TEST(Compile, AMlpCompiledByInductorTrainsOnOneRankWithItsTritonKernelsTimed)
{
    const std::string missing = (ScratchDir() / "missing.json").string();
    const CommandResult r = Simulate(1, "compiled_mlp.py --steps 5", "--missing " + missing);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    ExpectPositiveAndSteady(StepMs(r.output, 0), 0.35, 5, 5);
    const auto [launches, fromBytes] = TritonLaunches(ReadJson(missing));
    EXPECT_GE(launches, 5u * 3) << "forward, backward: several Triton kernels a step";
    EXPECT_EQ(fromBytes, launches) << "every Triton kernel estimated from the bytes it moves";
    EXPECT_NE(r.output.find("estimated (bytes): triton_"), std::string::npos) << r.output;
}

// Two ranks, DDP around the compiled module: both compile (their workers beside them: a
// rank waiting for its compile pool is not deadlocked while the other waits in a
// collective), then all-reduce their gradients every step.
TEST(Compile, AMlpCompiledByInductorTrainsWithDdpOnTwoRanks)
{
    const std::string missing = (ScratchDir() / "missing.json").string();
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r =
        Simulate(2, "compiled_mlp.py --steps 6", "--missing " + missing + " --report " + report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (int rank = 0; rank < 2; ++rank)
    {
        std::vector<double> ms = StepMs(r.output, rank);
        ASSERT_EQ(ms.size(), 6u) << r.output;
        // step 1 may still wait for the other rank's compilation (on its own clock)
        ExpectPositiveAndSteady(std::vector<double>(ms.begin() + 1, ms.end()), 0.35, 5, 5);
    }
    EXPECT_GE(TritonLaunches(ReadJson(missing)).first, 2u * 6 * 3);
    const nlohmann::json j = ReadJson(report);
    for (int rank = 0; rank < 2; ++rank)
    {
        uint64_t allReduces = 0;
        for (const auto& g : j["ranks"][rank]["collectives_by_group"])
        {
            allReduces += g["op"] == "all_reduce" ? g["count"].get<uint64_t>() : 0;
        }
        EXPECT_GE(allReduces, 6u) << "rank " << rank;
    }
}

// A rank's helper processes, spawned with an environment built from os.environ (as
// Inductor's compile pool is) or forked: they query the device and get the scenario's GPU,
// answered where they run; one that uses the GPU ends the run naming itself and the call.
TEST(Compile, ARanksHelperProcessesQueryTheGpuAndMayNotUseIt)
{
    const CommandResult ok = Simulate(1, "helper_processes.py", "");
    ASSERT_EQ(ok.exitCode, 0) << ok.output;
    EXPECT_NE(ok.output.find("[rank 0] spawned=4;NVIDIA H200;132;9.0;"), std::string::npos)
        << ok.output;
    EXPECT_NE(ok.output.find("[rank 0] forked=4"), std::string::npos) << ok.output;
    EXPECT_NE(ok.output.find("[rank 0] done=1"), std::string::npos) << ok.output;

    const CommandResult refused = Simulate(1, "helper_processes.py --use", "");
    EXPECT_NE(refused.exitCode, 0) << refused.output;
    const std::regex named(
        R"(simulation failed: pid \d+ \(.*python -c import torch; torch\.zeros.*\), a process )"
        R"(started beside rank 0 \(pid \d+\), called cudaMalloc)");
    EXPECT_TRUE(std::regex_search(refused.output, named)) << refused.output;
}
