#include "scenario.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

using namespace phantora;

namespace
{

const char* kValid = R"(name = "t"
[gpu]
model = "H100"
memory = "80GiB"
launch_latency = "3us"
hbm_bandwidth = "3.35TB/s"
pcie_bandwidth = "55GB/s"
[cpu]
time_scale = 0.0
[topology]
kind = "switch"
gpus = 8
gpus_per_node = 4
link_bandwidth = "400Gbps"
link_latency = "1us"
[network]
transport = "flow"
[kernels]
default = "5us"
[kernels.durations]
gemm = "120us"
)";

class ScenarioFile : public ::testing::Test
{
protected:
    std::filesystem::path Write(const std::string& text)
    {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("phantora-scenario-test-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        const auto file =
            dir / (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                   ".toml");
        std::ofstream(file) << text;
        return file;
    }

    /// Loads \p text, expecting a ScenarioError whose message contains every part.
    void ExpectError(const std::string& text, std::initializer_list<std::string> parts)
    {
        const auto file = Write(text);
        try
        {
            LoadScenario(file);
            FAIL() << "accepted:\n" << text;
        }
        catch (const ScenarioError& e)
        {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
            for (const auto& p : parts)
            {
                EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
            }
        }
    }

    static std::string Replace(std::string s, const std::string& from, const std::string& to)
    {
        const auto pos = s.find(from);
        EXPECT_NE(pos, std::string::npos) << from;
        return s.replace(pos, from.size(), to);
    }
};

} // namespace

TEST_F(ScenarioFile, LoadsEveryField)
{
    const Scenario s = LoadScenario(Write(kValid));
    EXPECT_EQ(s.name, "t");
    EXPECT_EQ(s.gpu.model, "H100");
    EXPECT_EQ(s.gpu.memoryBytes, 80ULL << 30);
    EXPECT_EQ(s.gpu.launchLatencyNs, 3000);
    EXPECT_DOUBLE_EQ(s.gpu.hbmBitsPerSecond, 3.35e12 * 8);
    EXPECT_DOUBLE_EQ(s.cpu.timeScale, 0.0);
    EXPECT_EQ(s.topology.gpus, 8U);
    EXPECT_EQ(s.topology.gpusPerNode, 4U);
    EXPECT_DOUBLE_EQ(s.topology.linkBitsPerSecond, 400e9);
    EXPECT_DOUBLE_EQ(s.topology.linkLatencyNs, 1000.0);
    EXPECT_EQ(s.network.transport, "flow");
    EXPECT_EQ(s.kernels.defaultNs, 5000);
    EXPECT_EQ(s.kernels.durationsNs.at("gemm"), 120000);
}

TEST_F(ScenarioFile, TheBundledScenarioLoads)
{
    const Scenario s = LoadScenario(std::string(PHANTORA_SOURCE_DIR) + "/scenarios/default.toml");
    EXPECT_GT(s.topology.gpus, 0U);
}

TEST_F(ScenarioFile, UnknownKeyIsNamedWithItsLine)
{
    ExpectError(Replace(kValid, "link_latency = \"1us\"",
                        "link_latency = \"1us\"\nlink_bandwith = \"1Gbps\""),
                {":16:", "topology.link_bandwith", "unknown key", "link_bandwidth"});
}

TEST_F(ScenarioFile, MissingFieldIsNamed)
{
    ExpectError(Replace(kValid, "gpus = 8\n", ""), {"topology.gpus", "missing"});
    ExpectError(Replace(kValid, "memory = \"80GiB\"\n", ""), {"gpu.memory", "missing"});
}

TEST_F(ScenarioFile, ZeroOrNegativeBandwidthIsRefused)
{
    ExpectError(Replace(kValid, "\"400Gbps\"", "\"0Gbps\""),
                {"topology.link_bandwidth", "positive"});
    ExpectError(Replace(kValid, "\"400Gbps\"", "\"-5Gbps\""),
                {"topology.link_bandwidth", "positive"});
    ExpectError(Replace(kValid, "\"400Gbps\"", "400"), {"topology.link_bandwidth", "bandwidth"});
}

TEST_F(ScenarioFile, WrongTypesAndValuesAreExplained)
{
    ExpectError(Replace(kValid, "gpus = 8", "gpus = \"eight\""), {"topology.gpus", "integer"});
    ExpectError(Replace(kValid, "gpus = 8", "gpus = 0"), {"topology.gpus", ">= 1"});
    ExpectError(Replace(kValid, "gpus_per_node = 4", "gpus_per_node = 3"),
                {"gpus_per_node", "divisor"});
    ExpectError(Replace(kValid, "transport = \"flow\"", "transport = \"magic\""),
                {"network.transport", "packet"});
    ExpectError(Replace(kValid, "gemm = \"120us\"", "gemm = \"fast\""),
                {"kernels.durations.gemm", "duration"});
}

TEST_F(ScenarioFile, SyntaxErrorsCarryLineAndColumn)
{
    ExpectError(Replace(kValid, "gpus = 8", "gpus = = 8"), {":12:"});
}

TEST_F(ScenarioFile, MissingFileIsNamed)
{
    try
    {
        LoadScenario("/nonexistent/x.toml");
        FAIL();
    }
    catch (const ScenarioError& e)
    {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/x.toml"), std::string::npos);
    }
}

TEST_F(ScenarioFile, NcclTableFillsTheModelsConfig)
{
    const Scenario s = LoadScenario(Write(std::string(kValid) + R"([nccl]
algorithm = "ring"
protocol = "ll128"
min_channels = 2
max_channels = 8
chunk_bytes = "1MiB"
max_chunks_per_channel = 4
ll128_base_latency = "12us"
ll128_step_latency = "1.5us"
simple_channel_bandwidth = "20GB/s"
)"));
    EXPECT_EQ(s.nccl.algorithm, "ring");
    EXPECT_EQ(s.nccl.protocol, "ll128");
    EXPECT_EQ(s.nccl.minChannels, 2U);
    EXPECT_EQ(s.nccl.maxChannels, 8U);
    EXPECT_EQ(s.nccl.chunkBytes, 1ULL << 20);
    EXPECT_EQ(s.nccl.maxChunksPerChannel, 4U);
    EXPECT_DOUBLE_EQ(s.nccl.ll128.baseLatencyNs, 12000.0);
    EXPECT_DOUBLE_EQ(s.nccl.ll128.stepLatencyNs, 1500.0);
    EXPECT_DOUBLE_EQ(s.nccl.simple.channelBytesPerSecond, 20e9);
    // "auto" and an absent table leave the choice to the tuning model
    EXPECT_EQ(LoadScenario(Write(kValid)).nccl.algorithm, "");
}

TEST_F(ScenarioFile, NcclTableIsStrict)
{
    ExpectError(std::string(kValid) + "[nccl]\nprotocl = \"ll\"\n",
                {":23:", "nccl.protocl", "unknown key", "protocol"});
    ExpectError(std::string(kValid) + "[nccl]\nprotocol = \"LL256\"\n", {"nccl.protocol"});
    ExpectError(std::string(kValid) + "[nccl]\nmin_channels = 4\nmax_channels = 2\n",
                {"nccl.max_channels"});
}

TEST_F(ScenarioFile, TheCalibratedScenarioLoads)
{
    const Scenario s =
        LoadScenario(std::string(PHANTORA_SOURCE_DIR) + "/scenarios/h200x4-nvlink.toml");
    EXPECT_EQ(s.topology.gpus, 4U);
    EXPECT_GT(s.nccl.simple.channelBytesPerSecond, 0.0);
}
