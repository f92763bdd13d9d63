// Scenario composition (`extends`): what merges, what overrides, where errors point, and
// that the shipped composed scenarios read the same as the files they are built from.
#include "scenario_loader.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

using namespace phantora;
namespace fs = std::filesystem;

namespace
{

const char* kBase = R"(name = "base"
[gpu]
model = "H100"
memory = "80GiB"
hbm_bandwidth = "3.35TB/s"
pcie_bandwidth = "55GB/s"
[topology]
kind = "node"
gpus = 8
intra = "nvswitch"
nvlink_bandwidth = "450GB/s"
nvlink_latency = "0.5us"
[network]
transport = "flow"
[kernels]
default = "5us"
profile = "base.sqlite"
[nccl]
max_channels = 16
chunk_bytes = "256KiB"
)";

class Compose : public ::testing::Test
{
protected:
    void SetUp() override
    {
        m_dir = fs::temp_directory_path() /
                ("phantora-compose-test-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir / "sub");
        Write("base.toml", kBase);
        Write("base.sqlite", ""); // [kernels] profile must name a file
    }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path Write(const std::string& name, const std::string& text)
    {
        std::ofstream(m_dir / name) << text;
        return m_dir / name;
    }

    std::string ErrorOf(const fs::path& file)
    {
        try
        {
            LoadScenario(file);
        }
        catch (const ScenarioError& e)
        {
            return e.what();
        }
        ADD_FAILURE() << file << " was accepted";
        return {};
    }

    fs::path m_dir;
};

} // namespace

TEST_F(Compose, TablesMergeAndKeysOverride)
{
    const Scenario s = LoadScenario(Write("child.toml", R"(extends = "base.toml"
name = "child"
[topology]
gpus = 4
[nccl]
max_channels = 8
)"));
    EXPECT_EQ(s.name, "child");
    EXPECT_EQ(s.gpu.model, "H100");                     // from the base, untouched
    EXPECT_EQ(s.topology.kind, "node");                 // merged table: base's keys ...
    EXPECT_EQ(s.topology.gpus, 4U);                     // ... with the child's over them
    EXPECT_DOUBLE_EQ(s.topology.nvlinkBitsPerSecond, 450e9 * 8);
    EXPECT_EQ(s.nccl.maxChannels, 8U);
    EXPECT_EQ(s.nccl.chunkBytes, 256U << 10);
    EXPECT_EQ(s.file, m_dir / "child.toml");
}

TEST_F(Compose, PathsAreRelativeToTheFileThatNamesThem)
{
    // The child lives in another folder; the base's profile stays the base's.
    const Scenario s = LoadScenario(Write("sub/child.toml", "extends = \"../base.toml\"\n"));
    EXPECT_TRUE(fs::equivalent(s.kernels.profile, m_dir / "base.sqlite")) << s.kernels.profile;
    // A profile the child names is relative to the child.
    Write("sub/mine.sqlite", "");
    const Scenario t = LoadScenario(
        Write("sub/own.toml", "extends = \"../base.toml\"\n[kernels]\nprofile = \"mine.sqlite\"\n"));
    EXPECT_TRUE(fs::equivalent(t.kernels.profile, m_dir / "sub" / "mine.sqlite"));
}

TEST_F(Compose, ListsApplyInOrderAndChainsNest)
{
    Write("fast.toml", "extends = \"base.toml\"\n[topology]\nnvlink_bandwidth = \"900GB/s\"\n");
    Write("four.toml", "[topology]\ngpus = 4\n[nccl]\nmax_channels = 4\n");
    const Scenario s = LoadScenario(
        Write("both.toml", "extends = [\"fast.toml\", \"four.toml\"]\n[nccl]\nmax_channels = 2\n"));
    EXPECT_DOUBLE_EQ(s.topology.nvlinkBitsPerSecond, 900e9 * 8);
    EXPECT_EQ(s.topology.gpus, 4U);
    EXPECT_EQ(s.nccl.maxChannels, 2U); // the including file has the last word
}

TEST_F(Compose, AnotherTopologyKindReplacesTheTable)
{
    const Scenario s = LoadScenario(Write("switch.toml", R"(extends = "base.toml"
[topology]
kind = "switch"
gpus = 2
link_bandwidth = "400Gbps"
link_latency = "1us"
)"));
    EXPECT_EQ(s.topology.kind, "switch"); // no nvlink_* keys left over to be refused
    EXPECT_EQ(s.topology.gpus, 2U);
}

TEST_F(Compose, UnknownKeysAreStillRefused)
{
    const std::string e =
        ErrorOf(Write("typo.toml", "extends = \"base.toml\"\n[topology]\ngpu = 4\n"));
    EXPECT_NE(e.find("typo.toml:3"), std::string::npos) << e;
    EXPECT_NE(e.find("'topology.gpu': unknown key"), std::string::npos) << e;
}

TEST_F(Compose, ErrorsNameTheFileThatWroteTheValue)
{
    Write("bad-base.toml", std::string(kBase).replace(std::string(kBase).find("gpus = 8"), 8,
                                                      "gpus = 0"));
    const std::string e = ErrorOf(Write("child.toml", "extends = \"bad-base.toml\"\n"));
    EXPECT_NE(e.find((m_dir / "bad-base.toml").string() + ":9"), std::string::npos) << e;
    EXPECT_NE(e.find("topology.gpus"), std::string::npos) << e;
}

TEST_F(Compose, CyclesAreRefusedNamingTheFiles)
{
    Write("a.toml", "extends = \"b.toml\"\n");
    Write("b.toml", "extends = \"c.toml\"\n");
    Write("c.toml", "extends = \"a.toml\"\n");
    const std::string e = ErrorOf(m_dir / "a.toml");
    EXPECT_NE(e.find("cycle"), std::string::npos) << e;
    for (const char* f : {"a.toml", "b.toml", "c.toml"})
    {
        EXPECT_NE(e.find((m_dir / f).string()), std::string::npos) << f << ": " << e;
    }
    const std::string self = ErrorOf(Write("self.toml", "extends = \"self.toml\"\n"));
    EXPECT_NE(self.find("cycle"), std::string::npos) << self;
}

TEST_F(Compose, MissingOrMistypedBasesAreRefused)
{
    const std::string missing = ErrorOf(Write("m.toml", "name = \"x\"\nextends = \"nope.toml\"\n"));
    EXPECT_NE(missing.find("m.toml:2: 'extends'"), std::string::npos) << missing;
    EXPECT_NE(missing.find("nope.toml"), std::string::npos) << missing;
    const std::string typed = ErrorOf(Write("n.toml", "extends = 3\n"));
    EXPECT_NE(typed.find("'extends': expected a scenario file"), std::string::npos) << typed;
}

// The shipped composed scenarios read exactly as the full files they replace did: the
// calibrated network and [nccl] of the NVLink node with the profile of the GPU.
TEST(ComposedScenarios, ProfiledNodesAreTheNodeWithTheProfile)
{
    const fs::path dir = fs::path(PHANTORA_SOURCE_DIR) / "scenarios";
    for (const std::string gpu : {"h200", "h100"})
    {
        for (const char* n : {"2", "4", "8"})
        {
            const fs::path node = dir / (gpu + "x" + n + "-nvlink.toml");
            const fs::path profiled = dir / (gpu + "x" + n + "-nvlink-profiled.toml");
            ASSERT_TRUE(fs::exists(profiled)) << profiled;
            SCOPED_TRACE(profiled.string());
            const Scenario a = LoadScenario(node);
            const Scenario b = LoadScenario(profiled);
            const Scenario p = LoadScenario(dir / (gpu + "-profile.toml"));
            EXPECT_EQ(b.topology.kind, a.topology.kind);
            EXPECT_EQ(b.topology.gpus, a.topology.gpus);
            EXPECT_DOUBLE_EQ(b.topology.nvlinkBitsPerSecond, a.topology.nvlinkBitsPerSecond);
            EXPECT_EQ(b.network.transport, a.network.transport);
            EXPECT_EQ(b.nccl.maxChannels, a.nccl.maxChannels);
            EXPECT_DOUBLE_EQ(b.nccl.simple.channelBytesPerSecond,
                             a.nccl.simple.channelBytesPerSecond);
            EXPECT_DOUBLE_EQ(b.nccl.ll.baseLatencyNs, a.nccl.ll.baseLatencyNs);
            EXPECT_TRUE(fs::equivalent(b.kernels.profile, p.kernels.profile));
            EXPECT_EQ(b.gpu.peakTflops, p.gpu.peakTflops);
            EXPECT_EQ(b.kernels.defaultNs, p.kernels.defaultNs);
        }
    }
    const Scenario cluster = LoadScenario(dir / "cluster-2x8-h100-ib.toml");
    const Scenario profiled = LoadScenario(dir / "cluster-2x8-h100-ib-profiled.toml");
    EXPECT_EQ(profiled.topology.kind, "cluster");
    EXPECT_EQ(profiled.topology.gpus, cluster.topology.gpus);
    EXPECT_EQ(profiled.topology.spines, cluster.topology.spines);
    EXPECT_DOUBLE_EQ(profiled.topology.nicBitsPerSecond, cluster.topology.nicBitsPerSecond);
    EXPECT_EQ(profiled.network.transport, cluster.network.transport);
    EXPECT_EQ(profiled.network.headerBytes, cluster.network.headerBytes);
    EXPECT_EQ(profiled.gpu.memoryBytes, cluster.gpu.memoryBytes);
    EXPECT_TRUE(fs::equivalent(profiled.kernels.profile,
                               LoadScenario(dir / "h100-profile.toml").kernels.profile));
}
