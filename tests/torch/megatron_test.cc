// Megatron-core 0.16.1 (build/venv, PHANTORA_WITH_MEGATRON) under phantora-cluster with no
// GPU: examples/megatron/train_gpt.py on 4 ranks of a tiny model with TP=2 and with PP=2
// issues its collectives on the right groups and gives positive, steady step times; the
// scenario's [workload] moe_routing makes an expert-parallel MoE move tokens.
#include "../e2e/run_helpers.h"
#include "framework_checks.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace phantora::test;

namespace
{

const std::string kSource = PHANTORA_SOURCE_DIR;
const std::string kScenario = kSource + "/scenarios/h200x4-nvlink.toml";
const std::string kExample = kSource + "/examples/megatron/train_gpt.py";
// A 2-core CI machine runs 4 ranks of this in about a minute.
const std::string kTinyModel =
    "--layers 2 --hidden 128 --heads 4 --seq 64 --vocab 1024 --micro-batch 2 --steps 4";

CommandResult Simulate(int ranks, const std::string& scenario, const std::string& args,
                       const std::string& report)
{
    return RunCommand(fmt::format("{} --scenario {} --nproc {} --report {} -- {} {} {} 2>&1",
                                  PHANTORA_CLUSTER, scenario, ranks, report, PHANTORA_TORCH_PYTHON,
                                  kExample, args));
}

struct Tally
{
    uint64_t count{0};
    uint64_t bytes{0};
};

/// What rank \p rank issued as \p op on the communicator of exactly \p group (global ranks).
Tally On(const nlohmann::json& report, int rank, const std::string& op,
         const std::vector<int>& group)
{
    Tally t;
    for (const auto& g : report["ranks"][rank]["collectives_by_group"])
    {
        if (g["op"] == op && g["group"].get<std::vector<int>>() == group)
        {
            t.count += g["count"].get<uint64_t>();
            t.bytes += g["bytes"].get<uint64_t>();
        }
    }
    return t;
}

/// \p op on any communicator of rank \p rank.
Tally AnyGroup(const nlohmann::json& report, int rank, const std::string& op)
{
    Tally t;
    for (const auto& g : report["ranks"][rank]["collectives_by_group"])
    {
        if (g["op"] == op)
        {
            t.count += g["count"].get<uint64_t>();
            t.bytes += g["bytes"].get<uint64_t>();
        }
    }
    return t;
}

/// "rank R: expert rows per step N" of the example's MoE runs (-1: no such line).
int ExpertRows(const nlohmann::json& run, int rank)
{
    const std::string output = run["output"].get<std::string>();
    std::smatch m;
    const std::regex line(
        fmt::format(R"(\[rank {0}\] rank {0}: expert rows per step (\d+))", rank));
    return std::regex_search(output, m, line) ? std::stoi(m[1]) : -1;
}

std::string WithWorkload(const std::string& table)
{
    std::ifstream in(kScenario);
    std::stringstream text;
    text << in.rdbuf() << "\n[workload]\n" << table << "\n";
    return WriteFile("scenario.toml", text.str()).string();
}

} // namespace

// TP=2 x DP=2: Megatron's groups are TP {0,1} {2,3} and DP {0,2} {1,3}.  The
// row-/column-parallel layers all-reduce activations and gradients on the TP group; the
// distributed optimizer reduce-scatters gradients and all-gathers parameters on the DP group.
// It used to stall intermittently under load (a member's read of the gradient-norm
// all-reduce held simulated time back while another member, which had not issued it yet,
// waited for its stream: CommitPolicy::ValuesResumeBound).
TEST(Megatron, TensorParallelCollectivesRunOnTheTensorParallelGroups)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Simulate(4, kScenario, kTinyModel + " --tp 2", report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("layout: TP=2 PP=1 CP=1 EP=1 DP=2 on 4 ranks"), std::string::npos)
        << r.output;
    ExpectPositiveAndSteady(StepMs(r.output), 0.25, 3);

    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 4u);
    for (int rank = 0; rank < 4; ++rank)
    {
        const std::vector<int> tp = rank < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
        const std::vector<int> dp = {rank % 2, rank % 2 + 2};
        // 2 layers x (attention + MLP) x (forward + backward) per micro-batch and step.
        EXPECT_GE(On(j, rank, "all_reduce", tp).count, 4u * 2 * 4) << "rank " << rank;
        EXPECT_GT(On(j, rank, "all_reduce", tp).bytes, 0u);
        EXPECT_GE(On(j, rank, "reduce_scatter", dp).count, 4u) << "rank " << rank;
        EXPECT_GE(On(j, rank, "all_gather", dp).count, 4u) << "rank " << rank;
        EXPECT_EQ(AnyGroup(j, rank, "send").count, 0u); // no pipeline
    }
}

// PP=2 x DP=2 with 8 micro-batches (1F1B): stages {0,1} then {2,3}; each step sends
// activations forward and gradients back between the stages, 8 each way.
TEST(Megatron, PipelineStagesSendAndReceiveEveryMicroBatch)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Simulate(4, kScenario, kTinyModel + " --pp 2 --microbatches 8", report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("layout: TP=1 PP=2 CP=1 EP=1 DP=2 on 4 ranks"), std::string::npos)
        << r.output;
    ExpectPositiveAndSteady(StepMs(r.output), 0.25, 3);

    const nlohmann::json j = ReadJson(report);
    ASSERT_EQ(j["ranks"].size(), 4u);
    const uint64_t steps = 4, microbatches = 8;
    // micro-batch 2 x seq 64 x hidden 128 in bf16: one activation or its gradient.
    const uint64_t message = 2 * 64 * 128 * 2;
    for (int rank = 0; rank < 4; ++rank)
    {
        const Tally sends = AnyGroup(j, rank, "send");
        const Tally recvs = AnyGroup(j, rank, "recv");
        EXPECT_EQ(sends.count, steps * microbatches) << "rank " << rank;
        EXPECT_EQ(recvs.count, steps * microbatches) << "rank " << rank;
        EXPECT_EQ(sends.bytes, steps * microbatches * message) << "rank " << rank;
        // Between the stages only: rank r and r + 2 (or r - 2).
        const std::vector<int> pipeline = {rank % 2, rank % 2 + 2};
        EXPECT_EQ(On(j, rank, "send", pipeline).count + On(j, rank, "recv", pipeline).count,
                  sends.count + recvs.count)
            << "rank " << rank << " sent or received outside its pipeline";
    }
}

// EP=2, 4 experts top-2: without the switch, routing reads zeros and the all-to-alls move
// nothing; with moe_routing = "balanced" each rank sends half its token-expert pairs to
// the other; with "skew" the rank holding the popular experts computes more.
TEST(Megatron, MoeRoutingSwitchMovesTokens)
{
    const std::string args = kTinyModel + " --experts 4 --topk 2 --ep 2 --steps 3";
    const std::vector<int> ep = {0, 1};
    auto run = [&](const std::string& scenario, const std::string& name)
    {
        const std::string report = (ScratchDir() / (name + ".json")).string();
        const CommandResult r = Simulate(2, scenario, args, report);
        EXPECT_EQ(r.exitCode, 0) << r.output;
        if (r.exitCode != 0)
        {
            return nlohmann::json();
        }
        nlohmann::json j = ReadJson(report);
        j["output"] = r.output;
        return j;
    };

    const nlohmann::json zeros = run(kScenario, "zeros");
    ASSERT_FALSE(zeros.is_null());
    EXPECT_EQ(On(zeros, 0, "send", ep).bytes, 0u);
    EXPECT_EQ(ExpertRows(zeros, 0), 0);

    const nlohmann::json balanced = run(WithWorkload("moe_routing = \"balanced\""), "balanced");
    ASSERT_FALSE(balanced.is_null());
    // 128 tokens per micro-batch x top-2 = 256 pairs, half to the other rank's 2 experts:
    // 128 rows of hidden 128 in bf16 forward (tokens and fp32 probabilities), then back.
    for (int rank = 0; rank < 2; ++rank)
    {
        const Tally sends = On(balanced, rank, "send", ep);
        EXPECT_GT(sends.bytes, 0u) << "rank " << rank;
        EXPECT_EQ(sends.bytes, On(balanced, 1 - rank, "recv", ep).bytes);
    }
    EXPECT_EQ(On(balanced, 0, "recv", ep).bytes, On(balanced, 1, "recv", ep).bytes);
    // 2 MoE layers x 2 sources x 128 pairs for each rank's 2 experts.
    EXPECT_EQ(ExpertRows(balanced, 0), 2 * 2 * 128);
    EXPECT_EQ(ExpertRows(balanced, 1), 2 * 2 * 128);

    const nlohmann::json skew = run(WithWorkload("moe_routing = \"skew\"\nmoe_skew = 1.5"), "skew");
    ASSERT_FALSE(skew.is_null());
    // Experts 0 and 1 (rank 0's) are the popular ones: 128 tokens x top-2 per micro-batch
    // and rank, shared 128 / 67 / 37 / 24 (expert 0 capped at one pair per token), so rank
    // 0's experts compute on 2 x (128 + 67) rows per MoE layer and rank 1's on 2 x 61.
    EXPECT_EQ(ExpertRows(skew, 0), 2 * 2 * (128 + 67));
    EXPECT_EQ(ExpertRows(skew, 1), 2 * 2 * (37 + 24));
    EXPECT_GT(On(skew, 0, "send", ep).bytes, 0u);
}

// The same with Megatron's allgather dispatcher (every rank gathers the EP group's tokens
// and its experts take theirs with a mask): the plan gives the rows its experts compute
// on, balanced and skewed as the all-to-all dispatcher's.
TEST(Megatron, MoeRoutingSwitchReachesTheAllGatherDispatcher)
{
    const std::string args =
        kTinyModel + " --experts 4 --topk 2 --ep 2 --steps 3 --dispatcher allgather";
    auto run = [&](const std::string& scenario, const std::string& name)
    {
        const std::string report = (ScratchDir() / (name + ".json")).string();
        const CommandResult r = Simulate(2, scenario, args, report);
        EXPECT_EQ(r.exitCode, 0) << r.output;
        EXPECT_EQ(r.output.find("does not reach"), std::string::npos) << r.output;
        nlohmann::json j;
        j["output"] = r.output;
        return j;
    };
    const nlohmann::json balanced = run(WithWorkload("moe_routing = \"balanced\""), "balanced");
    // 2 MoE layers x 2 sources x 128 pairs for each rank's 2 experts.
    EXPECT_EQ(ExpertRows(balanced, 0), 2 * 2 * 128);
    EXPECT_EQ(ExpertRows(balanced, 1), 2 * 2 * 128);
    const nlohmann::json skew = run(WithWorkload("moe_routing = \"skew\"\nmoe_skew = 1.5"), "skew");
    EXPECT_EQ(ExpertRows(skew, 0), 2 * 2 * (128 + 67));
    EXPECT_EQ(ExpertRows(skew, 1), 2 * 2 * (37 + 24));
}

// One rank, EP = 1 (what tools/device/record_megatron_on_device.sh records on one GPU): no
// all-to-all, so the dispatcher's own masked_select reads back the nonzero count a
// reduction kernel wrote into a block PyTorch's caching allocator handed out again.  It
// used to read the bytes a host-to-device copy had left there for a tensor freed since
// and failed ("numel: integer multiplication overflow"); kernels now make what they may
// write unknown (value_shadow.h).  A hidden size of 1024 and 2048 tokens per micro-batch
// put the count in such a block; the tiny model's did not.
TEST(Megatron, OneRankMoeRunsWithTheRoutingSwitch)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r =
        Simulate(1, WithWorkload("moe_routing = \"balanced\""),
                 "--layers 1 --hidden 1024 --heads 8 --seq 1024 --vocab 1024 --micro-batch 2 "
                 "--steps 3 --experts 4 --topk 2",
                 report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("layout: TP=1 PP=1 CP=1 EP=1 DP=1 on 1 ranks"), std::string::npos)
        << r.output;
    ExpectPositiveAndSteady(StepMs(r.output), 0.25, 3);
    // 2048 tokens x top-2, all on this rank's 4 experts, in the one MoE layer.
    nlohmann::json run;
    run["output"] = r.output;
    EXPECT_EQ(ExpertRows(run, 0), 2048 * 2) << r.output;
    const nlohmann::json j = ReadJson(report);
    EXPECT_EQ(AnyGroup(j, 0, "send").count, 0u); // an all-to-all would be sends and receives
}

TEST(Megatron, ABadWorkloadTableIsRefusedNamingTheKey)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r = Simulate(1, WithWorkload("moe_routing = \"skew\""), kTinyModel, report);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.output.find("moe_skew"), std::string::npos) << r.output;
}

// phantora-cluster's fork server (the default) preloads the script's own imports (Megatron-core's,
// which ask torch.cuda.is_available() when imported) and forks the ranks: the simulated steps must
// be those of exec'd ranks, to the printed microsecond (CPU work free: measured host time varies
// from run to run in either launch).
TEST(Megatron, ForkedRanksGiveTheExecdRanksStepTimes)
{
    const std::string scenario = CpuFreeScenario(kScenario);
    // DP = 2.  With TP = 2 the step times vary by 1 us (3.948 or 3.949 ms) from one
    // plain run to the next: not the launch.
    const std::string args = kTinyModel;
    const auto run = [&](const std::string& options)
    {
        return RunCommand(fmt::format("timeout 300 {} --scenario {} --nproc 2 {} -- {} {} {} 2>&1",
                                      PHANTORA_CLUSTER, scenario, options, PHANTORA_TORCH_PYTHON,
                                      kExample, args));
    };
    const CommandResult plain = run("--no-fork-server");
    ASSERT_EQ(plain.exitCode, 0) << plain.output;
    const CommandResult forked = run(""); // forked: the default
    ASSERT_EQ(forked.exitCode, 0) << forked.output;
    ExpectTheForkServerPreloadedTheProgramsImports(forked.output);
    const auto steps = [](const std::string& output)
    {
        std::vector<std::string> out;
        const std::regex re(R"(^(\[rank \d\] (step \d+|rank \d: mean step):? [0-9.]+ ms))");
        std::istringstream in(output);
        for (std::string l; std::getline(in, l);)
        {
            std::smatch m;
            if (std::regex_search(l, m, re))
            {
                out.push_back(m[1]);
            }
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    ASSERT_EQ(steps(plain.output).size(), 4u + 2u) << plain.output;
    EXPECT_EQ(steps(plain.output), steps(forked.output)) << "plain:\n"
                                                         << plain.output << "\nforked:\n"
                                                         << forked.output;
}

// Megatron-core's own CUDA graphs, as its trainer turns them on (--cuda-graph-impl local:
// cuda_graph_impl="local" and graph-safe RNG), with no change to the script: each layer's
// forward and backward captured once, then replayed; the steps after capture are steady.
TEST(Megatron, LocalCudaGraphsCaptureAndReplayEachLayer)
{
    const std::string report = (ScratchDir() / "report.json").string();
    const CommandResult r =
        Simulate(1, kScenario,
                 "--layers 2 --hidden 128 --heads 4 --seq 64 --vocab 1024 --micro-batch 2 "
                 "--steps 6 --cuda-graph",
                 report);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const std::vector<double> ms = StepMs(r.output);
    ASSERT_EQ(ms.size(), 6u) << r.output;
    // Megatron captures during the first steps; from step 3 on every step replays.
    ExpectPositiveAndSteady(std::vector<double>(ms.begin() + 2, ms.end()), 0.25, 4);
    const nlohmann::json j = ReadJson(report);
    const int replayed = j["ranks"][0]["graph_nodes"].get<int>();
    EXPECT_GT(replayed, 0) << "no CUDA graph was replayed:\n" << r.output;
}
