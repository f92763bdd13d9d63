// The network a scenario file describes: every shipped scenario builds, cluster graphs
// have the links the file asks for, and a GPU cut off from the others is refused.
#include "nccl/plan.h"
#include "nccl_bench.h"
#include "ns3/nstime.h"
#include "scenario_loader.h"
#include "topology_from_scenario.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <unistd.h>

using namespace phantora;

namespace
{

class TopologyFromScenario : public ::testing::Test
{
protected:
    // No Time::SetResolution here: ns-3 allows it once per process, and NetworkModel
    // (tested in this binary too) makes that call; every latency below is whole ns.

    std::filesystem::path Write(const std::string& topology)
    {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("phantora-topology-test-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        const auto file =
            dir / (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                   ".toml");
        std::ofstream(file) << R"(name = "t"
[gpu]
model = "H100"
memory = "80GiB"
hbm_bandwidth = "3.35TB/s"
pcie_bandwidth = "55GB/s"
[kernels]
default = "5us"
)" << topology;
        return file;
    }

    /// Kinds of the links incident to the node named \p name.
    static std::multiset<std::string> LinkKindsAt(const ns3::ClusterTopology& t,
                                                  const std::string& name)
    {
        std::multiset<std::string> kinds;
        for (uint32_t l = 0; l < t.GetNLinks(); ++l)
        {
            const auto& link = t.GetLink(l);
            if (t.GetNode(link.a).name == name || t.GetNode(link.b).name == name)
            {
                kinds.insert(link.kind);
            }
        }
        return kinds;
    }
};

const char* kCluster = R"([topology]
kind = "cluster"
nodes = 4
gpus_per_node = 4
intra = "nvswitch"
nvlink_bandwidth = "450GB/s"
nvlink_latency = "0.5us"
pcie_bandwidth = "64GB/s"
pcie_latency = "0.25us"
fabric = "infiniband"
nic_bandwidth = "400Gbps"
leaf_latency = "0.6us"
spine_latency = "0.7us"
nodes_per_unit = 2
spines = 2
oversubscription = 2.0
)";

} // namespace

TEST_F(TopologyFromScenario, EveryShippedScenarioLoadsAndBuilds)
{
    const std::filesystem::path dir = std::filesystem::path(PHANTORA_SOURCE_DIR) / "scenarios";
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
    {
        if (entry.path().extension() != ".toml")
        {
            continue;
        }
        ++files;
        SCOPED_TRACE(entry.path().string());
        try
        {
            const Scenario s = LoadScenario(entry.path());
            const auto topo = BuildTopology(s);
            EXPECT_EQ(topo->GetNGpus(), s.topology.gpus);
            EXPECT_EQ(s.topology.gpus % s.topology.gpusPerNode, 0U);
        }
        catch (const std::exception& e)
        {
            ADD_FAILURE() << e.what();
        }
    }
    EXPECT_GE(files, 14U) << "scenarios/ lost some of its files";
}

TEST_F(TopologyFromScenario, ClusterHasTheLinksTheFileAsksFor)
{
    const Scenario s = LoadScenario(Write(kCluster));
    const auto topo = BuildTopology(s);
    ASSERT_EQ(topo->GetNGpus(), 16U);
    // node-major GPU ids: GPU 5 is GPU 1 of node 1
    EXPECT_EQ(topo->GetNode(topo->GetGpuNode(5)).name, "n1.gpu1");
    // each GPU: NVLink to its NVSwitch and PCIe to its own NIC
    EXPECT_EQ(LinkKindsAt(*topo, "n1.gpu1"), (std::multiset<std::string>{"nvlink", "pcie"}));
    // each NIC: PCIe to its GPU and InfiniBand to its rail leaf
    EXPECT_EQ(LinkKindsAt(*topo, "n1.nic1"), (std::multiset<std::string>{"ib", "pcie"}));
    // 2 units of 2 nodes: leaf k of a unit has 2 NIC links and one link per spine
    EXPECT_EQ(LinkKindsAt(*topo, "u1.leaf3").size(), 4U);
    bool sawUplink = false;
    for (uint32_t l = 0; l < topo->GetNLinks(); ++l)
    {
        const auto& link = topo->GetLink(l);
        const std::string a = topo->GetNode(link.a).name;
        const std::string b = topo->GetNode(link.b).name;
        if (b.rfind("spine", 0) == 0)
        {
            sawUplink = true;
            // 2 nodes x 400 Gb/s down, 2:1, over 2 spines
            EXPECT_EQ(link.rate.GetBitRate(), 800'000'000'000ULL / 2 / 2) << a << "-" << b;
            EXPECT_EQ(link.delay, ns3::NanoSeconds(700));
        }
        if (a.find(".gpu") != std::string::npos && b.find(".nic") != std::string::npos)
        {
            EXPECT_EQ(link.rate.GetBitRate(), 512'000'000'000ULL);
            EXPECT_EQ(link.delay, ns3::PicoSeconds(250000));
        }
    }
    EXPECT_TRUE(sawUplink);
    // rail-aligned GPUs in different units: NIC, leaf, spine, leaf, NIC
    EXPECT_EQ(topo->Route(0, 8).size(), 6U);
    // same node: through the NVSwitch
    EXPECT_EQ(topo->Route(0, 3).size(), 2U);
}

TEST_F(TopologyFromScenario, PcieNodeJoinsGpusThroughOneSwitch)
{
    const Scenario s = LoadScenario(Write(R"([topology]
kind = "node"
gpus = 8
intra = "pcie"
pcie_bandwidth = "64GB/s"
pcie_latency = "1us"
)"));
    const auto topo = BuildTopology(s);
    ASSERT_EQ(topo->GetNGpus(), 8U);
    EXPECT_EQ(topo->GetNLinks(), 8U);
    for (uint32_t l = 0; l < topo->GetNLinks(); ++l)
    {
        EXPECT_EQ(topo->GetLink(l).kind, "pcie");
        EXPECT_EQ(topo->GetLink(l).delay, ns3::MicroSeconds(1));
    }
    EXPECT_EQ(topo->Route(2, 7).size(), 2U);
}

TEST_F(TopologyFromScenario, AGpuWithNoPathToAnotherIsNamed)
{
    // gpu2 hangs off gpu1 only, and routes never pass through a GPU.
    const auto file = Write(R"([topology]
kind = "custom"
gpus = 3
switches = ["sw"]
[[topology.links]]
between = ["gpu0", "sw"]
bandwidth = "100Gbps"
latency = "1us"
[[topology.links]]
between = ["gpu1", "sw"]
bandwidth = "100Gbps"
latency = "1us"
[[topology.links]]
between = ["gpu1", "gpu2"]
bandwidth = "100Gbps"
latency = "1us"
)");
    const Scenario s = LoadScenario(file);
    try
    {
        BuildTopology(s);
        FAIL() << "a GPU without a path was accepted";
    }
    catch (const ScenarioError& e)
    {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(file.string() + ":9:"), std::string::npos) << msg;
        EXPECT_NE(msg.find("no path"), std::string::npos) << msg;
        EXPECT_NE(msg.find("gpu2 -> gpu0"), std::string::npos) << msg;
        EXPECT_NE(msg.find("gpu0 -> gpu2"), std::string::npos) << msg;
        EXPECT_EQ(msg.find("gpu0 -> gpu1"), std::string::npos) << msg;
    }
}

TEST_F(TopologyFromScenario, TreeAllReduceCrossesNodesOnAShippedCluster)
{
    // gpus_per_node must reach NCCL's communicator shape: the tree spans nodes, a ring
    // inside each.
    const Scenario s = LoadScenario(std::filesystem::path(PHANTORA_SOURCE_DIR) /
                                    "scenarios/cluster-16x8-h100-ib.toml");
    ASSERT_EQ(s.topology.gpusPerNode, 8U);
    phantora::nccl::Config config = s.nccl;
    config.algorithm = "tree";
    config.maxChannels = 1;
    phantora::nccl::CommShape shape;
    shape.nRanks = s.topology.gpus;
    shape.ranksPerNode = s.topology.gpusPerNode;
    const phantora::nccl::Plan plan = phantora::nccl::MakePlan(
        phantora::nccl::CollectiveKind::AllReduce, shape, 64 << 20, config);
    EXPECT_EQ(plan.algorithm, "tree");
    std::set<uint32_t> nodesReached;
    for (const auto& t : plan.transfers)
    {
        if (t.src / 8 != t.dst / 8)
        {
            nodesReached.insert(t.dst / 8);
        }
    }
    EXPECT_GE(nodesReached.size(), 15U);
}

TEST_F(TopologyFromScenario, NcclTestsSeeTheClustersNodes)
{
    // Through the path phantora-nccl-tests takes (scenario -> network -> NCCL choice): on
    // 16 nodes a small all-reduce is a tree; were all 128 GPUs one NVLink node, a ring.
    Scenario s = LoadScenario(std::filesystem::path(PHANTORA_SOURCE_DIR) /
                              "scenarios/cluster-16x8-h100-ib.toml");
    const BenchResult multiNode =
        BenchCollective(s, phantora::nccl::CollectiveKind::AllReduce, 128, 64 << 10);
    EXPECT_EQ(multiNode.algorithm, "tree");
    s.topology.nodes = 1;
    s.topology.gpusPerNode = s.topology.gpus;
    s.nccl.nvlsEnable = false; // one node with NVLS would take NVLS (its own test)
    const BenchResult oneNode =
        BenchCollective(s, phantora::nccl::CollectiveKind::AllReduce, 128, 64 << 10);
    EXPECT_EQ(oneNode.algorithm, "ring");
}
