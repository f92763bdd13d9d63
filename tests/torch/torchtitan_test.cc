// TorchTitan 0.2.2 (build/venv, PHANTORA_WITH_TORCHTITAN) under phantora-cluster with no
// GPU: its own trainer (python -m torchtitan.train) with examples/torchtitan's Llama3
// debug config and the offline assets of make_assets.py, unmodified.  FSDP2 on 2 ranks
// and FSDP2 + tensor parallel on 4 issue their collectives on the right groups,
// and the trainer's own log (tokens/s, read from the simulated clock) gives positive, steady step
// times.
#include "../e2e/run_helpers.h"
#include "framework_checks.h"

#include <algorithm>
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
const std::string kConfig = kSource + "/examples/torchtitan/llama3_debug.toml";
constexpr int kSteps = 4;
constexpr int kBatch = 8;
constexpr int kSeq = 2048;

/// The tokenizer and c4_test data, written once per test into its scratch folder.
std::string MakeAssets()
{
    const std::string dir = (ScratchDir() / "assets").string();
    const CommandResult r = RunCommand(fmt::format(
        "{} {}/examples/torchtitan/make_assets.py {} 2>&1", PHANTORA_TORCH_PYTHON, kSource, dir));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    return dir;
}

CommandResult Train(int ranks, const std::string& scenario, const std::string& parallelism,
                    const std::string& report, const std::string& launch = "")
{
    const std::string assets = MakeAssets();
    const std::string scratch = ScratchDir().string();
    // HF_HOME in the scratch folder: the datasets cache of one run is not another's.
    return RunCommand(fmt::format(
        "HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_HOME={0}/hf {1} --scenario {3} "
        "--nproc {4} --report {5} {11} -- {6} -m torchtitan.train --job.config_file {7} "
        "--model.hf_assets_path {8}/tokenizer --training.dataset_path {8}/c4_test "
        "--job.dump_folder {0}/outputs --training.steps {9} {10} 2>&1",
        scratch, PHANTORA_CLUSTER, kSource, CpuFreeScenario(kSource + "/scenarios/" + scenario),
        ranks, report, PHANTORA_TORCH_PYTHON, kConfig, assets, kSteps, parallelism, launch));
}

/// Rank 0's step times in ms, from TorchTitan's "step: N ... tps: X" lines: tokens/s per
/// device over one step (log_freq = 1) of kBatch x kSeq tokens, divided among the
/// \p tensorParallel ranks that share them.
std::vector<double> StepMs(const std::string& output, int tensorParallel)
{
    const std::regex line(R"(\[rank 0\] .*step: +(\d+) .* tps: ([0-9,]+) )");
    std::vector<double> ms;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
         it != std::sregex_iterator(); ++it)
    {
        std::string tps = (*it)[2];
        tps.erase(std::remove(tps.begin(), tps.end(), ','), tps.end());
        ms.push_back(1000.0 * kBatch * kSeq / (std::stod(tps) * tensorParallel));
    }
    return ms;
}

uint64_t Count(const nlohmann::json& report, int rank, const std::string& op,
               const std::vector<int>& group)
{
    uint64_t n = 0;
    for (const auto& g : report["ranks"][rank]["collectives_by_group"])
    {
        if (g["op"] == op && g["group"].get<std::vector<int>>() == group)
        {
            n += g["count"].get<uint64_t>();
        }
    }
    return n;
}

} // namespace

// FSDP2 over 2 ranks: each of the 6 layers and the root module all-gathers its
// parameters in the forward pass (and again in the backward pass, being resharded after
// the forward) and reduce-scatters its gradients; the token count and the loss are
// all-reduced.
TEST(TorchTitan, Fsdp2OnTwoRanksGathersParametersAndScattersGradients)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Train(2, "h100x2-nvlink-profiled.toml",
                                  "--parallelism.data_parallel_shard_degree 2", report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    ExpectPositiveAndSteady(StepMs(r.output, 1), 0.2, kSteps, kSteps);

    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 2u);
    for (int rank = 0; rank < 2; ++rank)
    {
        EXPECT_GE(Count(j, rank, "all_gather", {0, 1}), kSteps * 7u) << "rank " << rank;
        EXPECT_GE(Count(j, rank, "reduce_scatter", {0, 1}), kSteps * 7u) << "rank " << rank;
        EXPECT_GE(Count(j, rank, "all_reduce", {0, 1}), kSteps * 2u) << "rank " << rank;
    }
}

// The same ranks forked from one process that imported torch and the trainer's imports
// (--fork-server).  TorchTitan's config manager fixes `sys.argv[1:]` when imported, as a
// default argument: every forked rank refused the fork server's own argv until the
// server imported with the program's (phantora_fork_server.py, _preload).
TEST(TorchTitan, Fsdp2RanksForkedFromOneProcessTrainAsExecdOnesDo)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r =
        Train(2, "h100x2-nvlink-profiled.toml", "--parallelism.data_parallel_shard_degree 2",
              report, "--fork-server");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    ExpectTheForkServerPreloadedTheProgramsImports(r.output);
    ExpectPositiveAndSteady(StepMs(r.output, 1), 0.2, kSteps, kSteps);
    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 2u);
    for (int rank = 0; rank < 2; ++rank)
    {
        EXPECT_GE(Count(j, rank, "all_gather", {0, 1}), kSteps * 7u) << "rank " << rank;
    }
}

// FSDP2 x TP on 4 ranks: TorchTitan's mesh is [dp_shard=2, tp=2], so the tensor-parallel
// groups are {0,1} and {2,3} (sequence parallelism: all-gathers and reduce-scatters of
// activations) and FSDP's are {0,2} and {1,3}.
// It used to stall: TorchTitan binds no device to its process group, so PyTorch creates
// each NCCL communicator at its first collective, passing the NCCL id through the
// TCPStore.  Rank 1 waited in the store (polling on its first thread) for rank 0's id for
// the TP group while rank 0 waited for an all-reduce on {0,2} that simulated time could
// not finish, since rank 1's first thread held it at its clock while it polled.  Such a
// poll now lets simulated time go after a second (thread_handoff.cc; the plain-torch
// reproduction is Torch.ARankWaitingInTheStoreForAnotherRanksKeyDoesNotHoldItsCollectiveBack).
TEST(TorchTitan, Fsdp2WithTensorParallelOnFourRanksUsesBothMeshDimensions)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Train(4, "h100x4-nvlink-profiled.toml",
                                  "--parallelism.data_parallel_shard_degree 2 "
                                  "--parallelism.tensor_parallel_degree 2",
                                  report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    ExpectPositiveAndSteady(StepMs(r.output, 2), 0.2, kSteps, kSteps);

    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 4u);
    for (int rank = 0; rank < 4; ++rank)
    {
        const std::vector<int> tp = rank < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
        const std::vector<int> dp = {rank % 2, rank % 2 + 2};
        EXPECT_GE(Count(j, rank, "all_gather", tp) + Count(j, rank, "reduce_scatter", tp) +
                      Count(j, rank, "all_reduce", tp),
                  kSteps * 6u)
            << "rank " << rank;
        EXPECT_GE(Count(j, rank, "all_gather", dp), kSteps * 7u) << "rank " << rank;
        EXPECT_GE(Count(j, rank, "reduce_scatter", dp), kSteps * 7u) << "rank " << rank;
    }
}

/// Rank 0's TorchTitan step lines from "step:" to the end, without the wall-clock stamp.
std::vector<std::string> StepLines(const std::string& output)
{
    const std::regex line(R"(\[rank 0\] .* - (step: .*))");
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
         it != std::sregex_iterator(); ++it)
    {
        out.push_back((*it)[1]);
    }
    return out;
}

// Folded (docs/folding.md), the same FSDP2 x TP job runs one process per TP rank (0 and 1)
// for the two FSDP replicas: FSDP's groups {0,2} and {1,3} span the absent ranks 2 and 3,
// and are no larger than the live world, so they complete once nothing else can move; the
// TP group {0,1} runs once more on replica 1's GPUs.  The step lines must be the
// unfolded run's, and the report must list the four ranks.
TEST(TorchTitan, FoldedFsdp2WithTensorParallelGivesTheUnfoldedStepTimes)
{
    const std::string parallelism =
        "--parallelism.data_parallel_shard_degree 2 --parallelism.tensor_parallel_degree 2";
    const std::string unfoldedReport = (ScratchDir() / "unfolded.json").string();
    const CommandResult unfolded =
        Train(4, "h100x4-nvlink-profiled.toml", parallelism, unfoldedReport,
              "--connect-timeout 600");
    ASSERT_EQ(unfolded.exitCode, 0) << unfolded.output;
    const std::string foldedReport = (ScratchDir() / "folded.json").string();
    const CommandResult folded =
        Train(4, "h100x4-nvlink-profiled.toml", parallelism, foldedReport,
              "--fold 2 --connect-timeout 600");
    ASSERT_EQ(folded.exitCode, 0) << folded.output;

    // Steps after the first, to the printed digit.  The first creates the communicators:
    // unfolded, rank 2 reads rank 0's NCCL id for {0,2} from the store, polling it in real
    // time (thread_handoff.cc lets simulated time go after a second of it); folded, rank 2
    // is absent and nobody polls.  It measured 0.03 % apart: within 0.1 %.
    const auto steps = StepLines(unfolded.output);
    ASSERT_EQ(steps.size(), static_cast<std::size_t>(kSteps)) << unfolded.output;
    const auto foldedSteps = StepLines(folded.output);
    ASSERT_EQ(foldedSteps.size(), steps.size()) << folded.output;
    EXPECT_EQ(std::vector<std::string>(foldedSteps.begin() + 1, foldedSteps.end()),
              std::vector<std::string>(steps.begin() + 1, steps.end()))
        << "unfolded:\n" << unfolded.output << "\nfolded:\n" << folded.output;
    const std::vector<double> unfoldedMs = StepMs(unfolded.output, 2);
    const std::vector<double> foldedMs = StepMs(folded.output, 2);
    ASSERT_EQ(foldedMs.size(), unfoldedMs.size());
    EXPECT_NEAR(foldedMs[0], unfoldedMs[0], 0.001 * unfoldedMs[0]);
    EXPECT_EQ(folded.output.find("[rank 2]"), std::string::npos) << folded.output;
    const nlohmann::json j = ReadJson(foldedReport);
    ASSERT_EQ(j["ranks"].size(), 4u);
    EXPECT_EQ(j["ranks"][2]["folded_into"], 0);
    EXPECT_EQ(j["ranks"][3]["folded_into"], 1);
    EXPECT_GE(Count(j, 0, "all_gather", {0, 2}), kSteps * 7u);
    EXPECT_GE(Count(j, 1, "reduce_scatter", {1, 3}), kSteps * 7u);
}

// Pipeline parallel on 2 ranks (1F1B, 8 microbatches): the stages exchange their tensor
// shapes once as pickled objects over send/recv (their sizes summed, the slice's end added
// by kernels whose results the value shadow computes), then each microbatch's activations
// go forward from rank 0 and its gradients back from rank 1.  It used to end at once on
// the shape exchange (rank 1 received 0 bytes where rank 0 sent the pickle).
TEST(TorchTitan, PipelineParallelOnTwoRanksSendsActivationsAndGradients)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Train(2, "h100x2-nvlink-profiled.toml",
                                  "--parallelism.data_parallel_shard_degree 1 "
                                  "--parallelism.pipeline_parallel_degree 2",
                                  report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    // TorchTitan divides the tokens per second among the non-data-parallel ranks (2 stages).
    ExpectPositiveAndSteady(StepMs(r.output, 2), 0.2, kSteps, kSteps);

    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 2u);
    constexpr uint64_t kMicrobatches = 8;
    for (int rank = 0; rank < 2; ++rank)
    {
        EXPECT_GE(Count(j, rank, "send", {0, 1}), kSteps * kMicrobatches) << "rank " << rank;
        EXPECT_GE(Count(j, rank, "recv", {0, 1}), kSteps * kMicrobatches) << "rank " << rank;
    }
}

// TorchTitan's own torch.compile ([compile] enable = true: each transformer block and the
// loss) with FSDP2 on 2 ranks: Inductor's compile workers run beside the ranks
// (interposer/process_role.h), and the blocks' Triton kernels launch through the driver
// API, each estimated from the bytes it moves (the profile has none of them).
TEST(TorchTitan, CompiledFsdp2OnTwoRanksRunsItsTritonKernels)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const std::string missing = (ScratchDir() / "missing.json").string();
    const CommandResult r = Train(2, "h100x2-nvlink-profiled.toml",
                                  "--parallelism.data_parallel_shard_degree 2 --compile.enable",
                                  report, "--missing " + missing);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    ExpectPositiveAndSteady(StepMs(r.output, 1), 0.2, kSteps, kSteps);
    uint64_t triton = 0;
    const nlohmann::json estimated = ReadJson(missing);
    for (const auto& op : estimated["ops"])
    {
        const std::string name = op.value("name", "");
        triton += name.rfind("triton_", 0) == 0 ? op["launches"].get<uint64_t>() : 0;
    }
    EXPECT_GE(triton, kSteps * 6u) << "a compiled block's kernels every step";
    const nlohmann::json j = ReadJson(report);
    for (int rank = 0; rank < 2; ++rank)
    {
        EXPECT_GE(Count(j, rank, "all_gather", {0, 1}), kSteps * 7u) << "rank " << rank;
        EXPECT_GE(Count(j, rank, "reduce_scatter", {0, 1}), kSteps * 7u) << "rank " << rank;
    }
}
