// Multi-node cluster graphs: the routes NCCL traffic would take through them.
#include "ns3/phantora-topology-helper.h"
#include "ns3/test.h"

#include <set>
#include <stdexcept>

using namespace ns3;

namespace
{

NodeSpec Hgx(uint32_t gpus)
{
    NodeSpec n;
    n.gpus = gpus;
    n.intraRate = DataRate("3600Gbps");
    n.pcieRate = DataRate("512Gbps");
    return n;
}

/// Number of hops from GPU a to GPU b.
size_t Hops(const Ptr<ClusterTopology>& t, uint32_t a, uint32_t b)
{
    return t->Route(a, b, 0).size();
}

} // namespace

class OneNvlinkNodeTestCase : public TestCase
{
public:
    OneNvlinkNodeTestCase() : TestCase("one NVLink server is GPUs on an NVSwitch with no NICs") {}

private:
    void DoRun() override
    {
        auto t = PhantoraTopologyHelper::MultiNode(1, Hgx(8));
        NS_TEST_ASSERT_MSG_EQ(t->GetNGpus(), 8U, "GPUs");
        NS_TEST_ASSERT_MSG_EQ(t->GetNNodes(), 9U, "8 GPUs and one NVSwitch");
        NS_TEST_ASSERT_MSG_EQ(t->GetNLinks(), 8U, "one link per GPU");
        NS_TEST_ASSERT_MSG_EQ(Hops(t, 0, 7), 2U, "through the NVSwitch");
        NS_TEST_ASSERT_MSG_EQ(t->GetLink(t->Route(0, 7)[0].link).kind, "nvlink", "NVLink channel");
    }
};

class RailOptimisedFabricTestCase : public TestCase
{
public:
    RailOptimisedFabricTestCase()
        : TestCase("rail-optimised fabric: rail peers one leaf apart, others cross a spine")
    {
    }

private:
    void DoRun() override
    {
        FabricSpec f;
        f.nicRate = DataRate("400Gbps");
        auto t = PhantoraTopologyHelper::MultiNode(4, Hgx(8), f);
        NS_TEST_ASSERT_MSG_EQ(t->GetNGpus(), 32U, "GPUs");
        // inside a node: still NVLink
        NS_TEST_ASSERT_MSG_EQ(Hops(t, 0, 5), 2U, "intra-node");
        // GPU 3 of node 0 to GPU 3 of node 2: gpu-nic-leaf3-nic-gpu
        NS_TEST_ASSERT_MSG_EQ(Hops(t, 3, 2 * 8 + 3), 4U, "rail-aligned");
        const auto route = t->Route(3, 2 * 8 + 3);
        NS_TEST_ASSERT_MSG_EQ(t->GetNode(t->HopTarget(route[1])).name, "u0.leaf3", "rail 3's leaf");
        NS_TEST_ASSERT_MSG_EQ(t->GetLink(route[1].link).kind, "ib", "fabric channel type");
        // GPU 0 of node 0 to GPU 5 of node 1: crosses a spine
        NS_TEST_ASSERT_MSG_EQ(Hops(t, 0, 8 + 5), 6U, "cross-rail");
        // ECMP over every spine (spines default to the number of rails)
        const uint32_t leaf0 = t->HopTarget(t->Route(0, 8 + 5)[1]);
        NS_TEST_ASSERT_MSG_EQ(t->NextHops(leaf0, 8 + 5).size(), 8U,
                              "one equal-cost path per spine");
    }
};

class OversubscriptionTestCase : public TestCase
{
public:
    OversubscriptionTestCase()
        : TestCase("leaf uplinks carry downlink capacity over the oversubscription ratio")
    {
    }

private:
    void DoRun() override
    {
        for (double ratio : {1.0, 4.0})
        {
            FabricSpec f;
            f.nicRate = DataRate("400Gbps");
            f.nodesPerUnit = 4;
            f.spines = 8;
            f.oversubscription = ratio;
            auto t = PhantoraTopologyHelper::MultiNode(8, Hgx(8), f);
            // two units: rail-aligned GPUs of different units cross a spine
            NS_TEST_ASSERT_MSG_EQ(Hops(t, 0, 4 * 8), 6U, "across units");
            const auto route = t->Route(0, 4 * 8);
            const uint64_t up = t->GetLink(route[2].link).rate.GetBitRate();
            // 4 nodes x 400 Gb/s down, over 8 spines
            NS_TEST_ASSERT_MSG_EQ(up, static_cast<uint64_t>(4 * 400e9 / ratio / 8), "uplink rate");
        }
    }
};

class PcieNodeTestCase : public TestCase
{
public:
    PcieNodeTestCase() : TestCase("PCIe servers: GPUs share a PCIe switch and its NICs") {}

private:
    void DoRun() override
    {
        NodeSpec n;
        n.gpus = 4;
        n.intra = "pcie";
        n.intraRate = DataRate("256Gbps");
        n.gpusPerNic = 2;
        auto t = PhantoraTopologyHelper::MultiNode(2, n);
        NS_TEST_ASSERT_MSG_EQ(Hops(t, 0, 3), 2U, "through the PCIe switch");
        NS_TEST_ASSERT_MSG_EQ(t->GetLink(t->Route(0, 3)[0].link).kind, "pcie", "PCIe channel");
        // gpu-pcie-nic-leaf-nic-pcie-gpu, over either NIC of the node
        NS_TEST_ASSERT_MSG_EQ(Hops(t, 0, 4), 6U, "to the other server");
        std::set<std::string> nicsUsed;
        for (uint64_t h = 0; h < 64; ++h)
        {
            const auto r = t->Route(0, 4, h);
            nicsUsed.insert(t->GetNode(t->HopTarget(r[1])).name);
        }
        NS_TEST_ASSERT_MSG_EQ(nicsUsed.size(), 2U, "ECMP over both NICs");
    }
};

class BadParametersTestCase : public TestCase
{
public:
    BadParametersTestCase()
        : TestCase("out-of-range parameters are refused with the parameter named")
    {
    }

private:
    void DoRun() override
    {
        auto refused = [](auto build, const std::string& word)
        {
            try
            {
                build();
            }
            catch (const std::invalid_argument& e)
            {
                return std::string(e.what()).find(word) != std::string::npos;
            }
            return false;
        };
        NodeSpec n = Hgx(8);
        FabricSpec f;
        f.oversubscription = 0.5;
        NS_TEST_ASSERT_MSG_EQ(
            refused([&] { PhantoraTopologyHelper::MultiNode(2, n, f); }, "oversubscription"), true,
            "oversubscription < 1");
        f = FabricSpec{};
        f.nodesPerUnit = 3;
        NS_TEST_ASSERT_MSG_EQ(
            refused([&] { PhantoraTopologyHelper::MultiNode(4, n, f); }, "nodesPerUnit"), true,
            "unit does not divide nodes");
        n.gpusPerNic = 3;
        NS_TEST_ASSERT_MSG_EQ(
            refused([&] { PhantoraTopologyHelper::MultiNode(2, n); }, "gpusPerNic"), true,
            "NIC sharing does not divide GPUs");
        n = Hgx(8);
        n.intra = "smoke-signals";
        NS_TEST_ASSERT_MSG_EQ(refused([&] { PhantoraTopologyHelper::MultiNode(2, n); }, "intra"),
                              true, "unknown intra-node fabric");
    }
};

class TopologyHelperTestSuite : public TestSuite
{
public:
    TopologyHelperTestSuite() : TestSuite("phantora-topology-helper", UNIT)
    {
        AddTestCase(new OneNvlinkNodeTestCase, TestCase::QUICK);
        AddTestCase(new RailOptimisedFabricTestCase, TestCase::QUICK);
        AddTestCase(new OversubscriptionTestCase, TestCase::QUICK);
        AddTestCase(new PcieNodeTestCase, TestCase::QUICK);
        AddTestCase(new BadParametersTestCase, TestCase::QUICK);
    }
};

static TopologyHelperTestSuite g_topologyHelperTestSuite;
