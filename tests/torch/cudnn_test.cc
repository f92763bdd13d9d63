// PyTorch's cuDNN paths under the simulator, with the stock wheel: scaled-dot-product
// attention with torch's own backend choice (cuDNN's fused attention on Hopper) trains
// and is timed from the profile's entries for its signatures; a small ResNet (cuDNN
// convolutions, batch norm, channels_last, bf16) trains with DDP; a cuDNN call the
// simulator does not model still ends the rank naming it.
#include "../e2e/run_helpers.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

using namespace phantora::test;
namespace fs = std::filesystem;

namespace
{

const fs::path kSource = PHANTORA_SOURCE_DIR;
const std::string kGpt = (kSource / "examples/torch/train_gpt.py").string();
const std::string kCnn = (kSource / "examples/torch/train_cnn.py").string();
// The shape of tests/data/cudnn/H200-cudnn.tsv's attention entries.
const std::string kSmallGpt = "--layers 2 --width 256 --heads 4 --seq 128 --batch 4 --vocab 4096";
const std::string kSmallCnn = "--blocks 1 1 --width 16 --image-size 32 --batch 4 --classes 10";

CommandResult Simulate(const fs::path& scenario, int ranks, const std::string& args,
                       const std::string& extra = "")
{
    return RunCommand(fmt::format("{} --scenario {} --nproc {} {} -- {} {} 2>&1", PHANTORA_CLUSTER,
                                  scenario.string(), ranks, extra, PHANTORA_TORCH_PYTHON, args));
}

nlohmann::json ReadJson(const fs::path& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

/// The names of the cuDNN ops a run's missing-ops file lists (timed by an estimate).
std::set<std::string> EstimatedCudnnApis(const fs::path& missing)
{
    std::set<std::string> apis;
    const nlohmann::json j = ReadJson(missing);
    for (const auto& op : j["ops"])
    {
        if (op["kind"] == "cudnn")
        {
            const std::string name = op["name"];
            apis.insert(name.substr(0, name.find('(')));
        }
    }
    return apis;
}

} // namespace

// The hand-made profile (tests/data/cudnn/) holds the attention signatures of the small
// GPT: every forward and backward execute lasts exactly what it says.
TEST(Cudnn, DefaultAttentionTrainsAndIsTimedFromTheProfile)
{
    const fs::path dir = ScratchDir();
    fs::copy_file(kSource / "tests/data/cudnn/h200-cudnn.toml", dir / "h200-cudnn.toml");
    const CommandResult imported = RunCommand(fmt::format(
        "{} import --db {} {} 2>&1", PHANTORA_GPU_PROFILER, (dir / "H200-cudnn.sqlite").string(),
        (kSource / "tests/data/cudnn/H200-cudnn.tsv").string()));
    ASSERT_EQ(imported.exitCode, 0) << imported.output;

    const fs::path trace = dir / "trace.json", missing = dir / "missing.json";
    const CommandResult r =
        Simulate(dir / "h200-cudnn.toml", 1,
                 fmt::format("{} {} --attention auto --steps 3", kGpt, kSmallGpt),
                 fmt::format("--trace {} --missing {}", trace.string(), missing.string()));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("[rank 0] step 2:"), std::string::npos) << r.output;

    // 2 layers x 3 steps of each; nothing of cuDNN estimated
    int forward = 0, backward = 0;
    const nlohmann::json events = ReadJson(trace);
    for (const auto& e : events["traceEvents"])
    {
        if (e["ph"] != "X")
        {
            continue;
        }
        const std::string name = e["name"];
        if (name.starts_with("cudnnSdpaFprop(b=4,h=4,h_kv=4,s_q=128,s_kv=128,d_qk=64,d_v=64,"
                             "type=bf16,layout=bshd,causal=1,"))
        {
            ++forward;
            EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 23.456) << name;
        }
        else if (name.starts_with("cudnnSdpaBprop(b=4,h=4,"))
        {
            ++backward;
            EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 54.321) << name;
        }
    }
    EXPECT_EQ(forward, 6);
    EXPECT_EQ(backward, 6);
    EXPECT_TRUE(EstimatedCudnnApis(missing).empty());
}

// Convolutions through cuDNN's graph API with DDP across two ranks; under bf16 autocast
// PyTorch normalises with its own kernels, in float32 through cuDNN's batch-norm calls.
TEST(Cudnn, ASmallResNetTrainsWithChannelsLastInBf16AndDdp)
{
    const fs::path dir = ScratchDir();
    const fs::path report = dir / "report.json", missing = dir / "missing.json";
    const CommandResult r = Simulate(
        kSource / "scenarios/h200-profile.toml", 2,
        fmt::format("{} {} --channels-last --dtype bf16 --mode ddp --steps 3", kCnn, kSmallCnn),
        fmt::format("--report {} --missing {}", report.string(), missing.string()));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("channels_last, mode ddp, 2 ranks on NVIDIA H200"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("[rank 0] step 2:"), std::string::npos) << r.output;
    const nlohmann::json j = ReadJson(report);
    for (int rank = 0; rank < 2; ++rank)
    {
        std::smatch peak;
        ASSERT_TRUE(std::regex_search(
            r.output, peak,
            std::regex(
                fmt::format(R"(\[rank {0}\] rank {0}: mean step .* reserved (\d+) bytes)", rank))))
            << r.output;
        EXPECT_EQ(j["ranks"][rank]["peak_device_bytes"].get<uint64_t>(), std::stoull(peak[1]));
        EXPECT_GE(j["ranks"][rank]["collectives"].get<int>(), 3); // a gradient all-reduce a step
    }
    EXPECT_EQ(EstimatedCudnnApis(missing),
              (std::set<std::string>{"cudnnConvDgrad", "cudnnConvFprop", "cudnnConvWgrad"}));
}

TEST(Cudnn, Float32BatchNormGoesThroughCudnn)
{
    const fs::path missing = ScratchDir() / "missing.json";
    const CommandResult r = Simulate(kSource / "scenarios/h200-profile.toml", 1,
                                     fmt::format("{} {} --dtype fp32 --steps 2", kCnn, kSmallCnn),
                                     fmt::format("--missing {}", missing.string()));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto apis = EstimatedCudnnApis(missing);
    EXPECT_TRUE(apis.count("cudnnBatchNormFwdTraining")) << r.output;
    EXPECT_TRUE(apis.count("cudnnBatchNormBwd")) << r.output;
    EXPECT_TRUE(apis.count("cudnnConvFprop")) << r.output;
}

// An LSTM goes through cuDNN's RNN API, which is not simulated: the rank ends at its
// first call, naming it, instead of running on with made-up answers.
TEST(Cudnn, ACallStillNotSimulatedEndsTheRankNamingIt)
{
    const CommandResult r = Simulate(kSource / "scenarios/h200x4-nvlink.toml", 1,
                                     (kSource / "tests/torch/cudnn_not_simulated.py").string());
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("cudnnCreateDropoutDescriptor is not implemented by the simulator yet"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("lstm ran"), std::string::npos) << r.output;
}
