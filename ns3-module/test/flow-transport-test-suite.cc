// Expectations are worked out by hand from the model in flow-transport.h.  Rates are chosen
// so that a full 4096-byte packet takes a whole number of microseconds, which keeps them
// exact at any Time resolution; partial packets are costed with
// DataRate::CalculateBytesTxTime, the packet-level definition of a packet's TxTime.
#include "nccl/plan.h"
#include "ns3/cluster-topology.h"
#include "ns3/flow-transport-helper.h"
#include "ns3/flow-transport.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <random>
#include <vector>

using namespace ns3;
namespace nccl = phantora::nccl;

namespace
{

constexpr uint64_t kPayload = 4096 - 48; ///< payload of a full packet at the default Mtu
const DataRate kRate("8192Mbps");        ///< a full packet (4096 wire bytes) in 4 us
const Time kDelay = MicroSeconds(1);

/// GPUs 0..n-1 each linked to one switch.
Ptr<ClusterTopology> MakeStar(const std::vector<DataRate>& rates, Time delay)
{
    auto topo = Create<ClusterTopology>();
    const uint32_t sw = topo->AddSwitch("sw");
    for (uint32_t i = 0; i < rates.size(); ++i)
    {
        const uint32_t gpu = topo->AddGpu("gpu" + std::to_string(i));
        topo->AddLink(gpu, sw, rates[i], delay, "nvlink");
    }
    return topo;
}

/// Records the delivery instant of each send.
struct Deliveries
{
    std::vector<Time> at;

    PhantoraTransport::DeliveredCallback Slot()
    {
        at.push_back(Seconds(-1));
        const size_t i = at.size() - 1;
        return [this, i]() { at[i] = Simulator::Now(); };
    }
};

void SendAt(Ptr<FlowTransport> t, Time when, uint32_t src, uint32_t dst, uint64_t bytes,
            PhantoraTransport::DeliveredCallback cb)
{
    Simulator::Schedule(when, [=]() { t->Send(src, dst, bytes, cb); });
}

Time TxTime(DataRate rate, uint64_t wireBytes)
{
    return rate.CalculateBytesTxTime(static_cast<uint32_t>(wireBytes));
}

} // namespace

class FlowLoneOneLinkTestCase : public TestCase
{
public:
    FlowLoneOneLinkTestCase() : TestCase("lone flow on one link: per-packet TxTime plus delay") {}

private:
    void DoRun() override
    {
        auto topo = Create<ClusterTopology>();
        const uint32_t a = topo->AddGpu("a");
        const uint32_t b = topo->AddGpu("b");
        topo->AddLink(a, b, kRate, kDelay, "nvlink");
        Ptr<FlowTransport> t = FlowTransportHelper().Install(topo);
        Deliveries d;
        t->Send(0, 1, 10 * kPayload, d.Slot());
        SendAt(t, MilliSeconds(1), 0, 1, 10 * kPayload + 1000, d.Slot());
        SendAt(t, MilliSeconds(2), 1, 0, 0, d.Slot());
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(t->GetWireBytes(10 * kPayload), 40960U, "ten full packets");
        NS_TEST_ASSERT_MSG_EQ(t->GetWireBytes(0), 48U, "a 0-byte send is one header");
        NS_TEST_ASSERT_MSG_EQ(d.at[0], MicroSeconds(41), "10 x 4 us + 1 us");
        NS_TEST_ASSERT_MSG_EQ(d.at[1] - MilliSeconds(1),
                              MicroSeconds(40) + TxTime(kRate, 1048) + kDelay,
                              "ten full packets, a 1048-byte one, the delay");
        NS_TEST_ASSERT_MSG_EQ(d.at[2] - MilliSeconds(2), TxTime(kRate, 48) + kDelay,
                              "a header-only packet");
        NS_TEST_ASSERT_MSG_EQ(t->GetFlowsCompleted(), 3U, "flows completed");
        NS_TEST_ASSERT_MSG_EQ(t->GetNActiveFlows(), 0U, "no flow left");
        Simulator::Destroy();
    }
};

class FlowLoneThroughSwitchTestCase : public TestCase
{
public:
    FlowLoneThroughSwitchTestCase()
        : TestCase("lone flow through switches: store-and-forward of one packet per extra hop")
    {
    }

private:
    void DoRun() override
    {
        Ptr<FlowTransport> t = FlowTransportHelper().Install(MakeStar({kRate, kRate}, kDelay));
        Deliveries d;
        t->Send(0, 1, 10 * kPayload, d.Slot());
        SendAt(t, MilliSeconds(1), 0, 1, 10 * kPayload + 1000, d.Slot());
        SendAt(t, MilliSeconds(2), 0, 1, 0, d.Slot());
        SendAt(t, MilliSeconds(3), 0, 1, 1000, d.Slot());
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(d.at[0], MicroSeconds(40 + 4 + 2),
                              "10 packets, 1 more hop, 2 delays");
        // The short last packet reaches the switch before the full one ahead of it has left,
        // so it waits: the extra hop costs a full packet's time.
        NS_TEST_ASSERT_MSG_EQ(d.at[1] - MilliSeconds(1),
                              MicroSeconds(40) + TxTime(kRate, 1048) + MicroSeconds(4) + 2 * kDelay,
                              "partial last packet");
        NS_TEST_ASSERT_MSG_EQ(d.at[2] - MilliSeconds(2), 2 * TxTime(kRate, 48) + 2 * kDelay,
                              "header-only packet over two hops");
        NS_TEST_ASSERT_MSG_EQ(d.at[3] - MilliSeconds(3), 2 * TxTime(kRate, 1048) + 2 * kDelay,
                              "single packet over two hops");
        Simulator::Destroy();

        // gpu - sw0 =(half rate)= sw1 - gpu: the slow middle hop paces the packets, and the
        // fast hops add one packet each.
        auto topo = Create<ClusterTopology>();
        const uint32_t g0 = topo->AddGpu("g0");
        const uint32_t g1 = topo->AddGpu("g1");
        const uint32_t s0 = topo->AddSwitch("s0");
        const uint32_t s1 = topo->AddSwitch("s1");
        topo->AddLink(g0, s0, kRate, kDelay, "pcie");
        topo->AddLink(s0, s1, DataRate("4096Mbps"), kDelay, "ib");
        topo->AddLink(s1, g1, kRate, kDelay, "pcie");
        Ptr<FlowTransport> t2 = FlowTransportHelper().Install(topo);
        Deliveries d2;
        t2->Send(0, 1, 10 * kPayload, d2.Slot());
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(d2.at[0], MicroSeconds(10 * 8 + 4 + 4 + 3), "heterogeneous path");
        Simulator::Destroy();
    }
};

class FlowSharedLinkTestCase : public TestCase
{
public:
    FlowSharedLinkTestCase()
        : TestCase("two flows started together on one link each get half the rate")
    {
    }

private:
    void DoRun() override
    {
        auto topo = Create<ClusterTopology>();
        const uint32_t a = topo->AddGpu("a");
        const uint32_t b = topo->AddGpu("b");
        topo->AddLink(a, b, kRate, kDelay, "nvlink");
        Ptr<FlowTransport> t = FlowTransportHelper().Install(topo);
        Deliveries d;
        t->Send(0, 1, 10 * kPayload, d.Slot());
        t->Send(0, 1, 10 * kPayload, d.Slot());
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(d.at[0], MicroSeconds(80 + 1), "first flow at twice the lone time");
        NS_TEST_ASSERT_MSG_EQ(d.at[1], MicroSeconds(80 + 1), "second flow at twice the lone time");
        NS_TEST_ASSERT_MSG_EQ(t->GetRateRecomputations(), 2U, "one at the start, one at the end");
        Simulator::Destroy();
    }
};

class FlowStaggeredTestCase : public TestCase
{
public:
    FlowStaggeredTestCase()
        : TestCase("a flow starting halfway through another slows it down, then speeds up")
    {
    }

private:
    void DoRun() override
    {
        auto topo = Create<ClusterTopology>();
        const uint32_t a = topo->AddGpu("a");
        const uint32_t b = topo->AddGpu("b");
        topo->AddLink(a, b, kRate, kDelay, "nvlink");
        Ptr<FlowTransport> t = FlowTransportHelper().Install(topo);
        Deliveries d;
        t->Send(0, 1, 10 * kPayload, d.Slot());
        SendAt(t, MicroSeconds(20), 0, 1, 10 * kPayload, d.Slot());
        Simulator::Run();
        // A: 20 us alone (half its bytes), then the other half at half rate: 40 us more.
        NS_TEST_ASSERT_MSG_EQ(d.at[0], MicroSeconds(20 + 40 + 1), "first flow");
        // B: half its bytes at half rate while A runs (to 60 us), the rest alone in 20 us.
        NS_TEST_ASSERT_MSG_EQ(d.at[1], MicroSeconds(60 + 20 + 1), "second flow");
        NS_TEST_ASSERT_MSG_EQ(t->GetRateChanges(), 2U, "A slowed, then B sped up");
        Simulator::Destroy();
    }
};

class FlowMaxMinTestCase : public TestCase
{
public:
    FlowMaxMinTestCase()
        : TestCase("max-min: a flow limited elsewhere leaves its share to the others")
    {
    }

private:
    void DoRun() override
    {
        // u = 819.2 Mb/s.  gpu0, gpu1 at 20u and gpu2 at 2u all send to gpu3 at 10u:
        // gpu2's flow is held to 2u by its own link, the other two split the 8u left.
        const DataRate u20("16384Mbps");
        const DataRate u10("8192Mbps");
        const DataRate u2("1638400kbps");
        Ptr<FlowTransport> t = FlowTransportHelper().Install(MakeStar({u20, u20, u2, u10}, kDelay));
        Deliveries d;
        for (uint32_t src = 0; src < 3; ++src)
        {
            t->Send(src, 3, 10 * kPayload, d.Slot());
        }
        double err = -1;
        Simulator::Schedule(MicroSeconds(50), [&]() { err = t->CheckMaxMinFair(); });
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ_TOL(err, 0.0, 1e-9, "rates are the max-min allocation");
        // At 4u a packet takes 10 us: 100 us to drain; alone it would drain in 40 us at 10u
        // but arrive after 2 (one packet on the 20u hop) + 40 us, plus 2 delays.
        NS_TEST_ASSERT_MSG_EQ(d.at[0], MicroSeconds(100 + 2 + 2), "gpu0 at 4u");
        NS_TEST_ASSERT_MSG_EQ(d.at[1], MicroSeconds(100 + 2 + 2), "gpu1 at 4u");
        // At 2u a packet takes 20 us: 200 us, plus one packet on the 10u hop, plus 2 delays.
        NS_TEST_ASSERT_MSG_EQ(d.at[2], MicroSeconds(200 + 4 + 2), "gpu2 at 2u");
        NS_TEST_ASSERT_MSG_EQ(t->GetRateChanges(), 0U, "gpu2 never gains: its link holds it");
        Simulator::Destroy();
    }
};

class FlowIncastTestCase : public TestCase
{
public:
    FlowIncastTestCase()
        : TestCase("incast: three senders through a switch each get a third of the receiver")
    {
    }

private:
    void DoRun() override
    {
        Ptr<FlowTransport> t =
            FlowTransportHelper().Install(MakeStar({kRate, kRate, kRate, kRate}, kDelay));
        Deliveries d;
        for (uint32_t src = 0; src < 3; ++src)
        {
            t->Send(src, 3, 10 * kPayload, d.Slot());
        }
        Simulator::Run();
        for (uint32_t i = 0; i < 3; ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(d.at[i], MicroSeconds(3 * 40 + 4 + 2), "sender " << i);
        }
        Simulator::Destroy();
    }
};

class FlowRingAllReduceTestCase : public TestCase
{
public:
    FlowRingAllReduceTestCase()
        : TestCase("ring all-reduce on a star takes 2(n-1) uncontended steps")
    {
    }

private:
    void Check(uint32_t n, uint64_t bytes, Time step)
    {
        Ptr<FlowTransport> t =
            FlowTransportHelper().Install(MakeStar(std::vector<DataRate>(n, kRate), kDelay));
        std::vector<uint32_t> ranks(n);
        for (uint32_t i = 0; i < n; ++i)
        {
            ranks[i] = i;
        }
        Time done = Seconds(-1);
        NcclPlanExecutor::Start(t, nccl::MakeRingAllReducePlan(n, bytes), ranks,
                                [&]() { done = Simulator::Now(); });
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(done, 2 * (n - 1) * step, n << " ranks");
        NS_TEST_ASSERT_MSG_EQ(t->GetFlowsCompleted(), 2U * (n - 1) * n, "one flow per transfer");
        NS_TEST_ASSERT_MSG_EQ(t->GetRateChanges(), 0U, "no flow ever shares a link");
        Simulator::Destroy();
    }

    void DoRun() override
    {
        // chunk of 10 full packets: 10 x 4 us, one more hop, two delays
        Check(4, 4 * 10 * kPayload, MicroSeconds(40 + 4 + 2));
        // 1 MiB over 8: chunks of 131072 B = 32 full packets and one of 1536 + 48 bytes
        Check(8, 1 << 20,
              MicroSeconds(32 * 4) + TxTime(kRate, 1536 + 48) + MicroSeconds(4) + 2 * kDelay);
    }
};

class FlowChainRankEndsTestCase : public TestCase
{
public:
    FlowChainRankEndsTestCase()
        : TestCase("a chain's ranks end on their own; back-to-back calls start per rank")
    {
    }

private:
    void DoRun() override
    {
        // 0 -> 1 -> 2 on a star, 10 full packets a hop: 46 us each (see the ring test),
        // then 5 us of kernel teardown on each rank.
        nccl::Plan one;
        one.fixedLatency = nccl::Picoseconds(5'000'000);
        one.transfers.push_back({0, 1, 10 * kPayload});
        nccl::Transfer second{1, 2, 10 * kPayload};
        second.deps = {0};
        one.transfers.push_back(second);
        const Time hop = MicroSeconds(46);
        const Time teardown = MicroSeconds(5);
        for (uint32_t calls : {1U, 2U})
        {
            Ptr<FlowTransport> t =
                FlowTransportHelper().Install(MakeStar(std::vector<DataRate>(3, kRate), kDelay));
            NcclPlanExecutor::RankEnds ends;
            NcclPlanExecutor::Start(t, nccl::BackToBack(one, calls), {0, 1, 2},
                                    NcclPlanExecutor::RankEndsCallback(
                                        [&](const NcclPlanExecutor::RankEnds& e) { ends = e; }));
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ(ends.size(), calls, "one row of ends per call");
            NS_TEST_ASSERT_MSG_EQ(ends[0][0], hop + teardown, "the root ends after its send");
            NS_TEST_ASSERT_MSG_EQ(ends[0][1], 2 * hop + teardown, "the middle after forwarding");
            NS_TEST_ASSERT_MSG_EQ(ends[0][2], 2 * hop + teardown, "the tail after its receive");
            if (calls == 2)
            {
                // The root's second send starts when it ended the first call, while the
                // middle still forwards the first: the calls overlap along the chain.
                NS_TEST_ASSERT_MSG_EQ(ends[1][0], 2 * (hop + teardown), "root, second call");
                NS_TEST_ASSERT_MSG_EQ(ends[1][2], 2 * (hop + teardown) + hop,
                                      "tail, second call: one hop behind the root");
            }
            Simulator::Destroy();
        }
    }
};

class FlowEcmpTestCase : public TestCase
{
public:
    FlowEcmpTestCase() : TestCase("ECMP spreads flows between two leaves over both spines") {}

private:
    void DoRun() override
    {
        auto topo = Create<ClusterTopology>();
        std::vector<uint32_t> leaves{topo->AddSwitch("leaf0"), topo->AddSwitch("leaf1")};
        std::vector<uint32_t> spines{topo->AddSwitch("spine0"), topo->AddSwitch("spine1")};
        for (uint32_t g = 0; g < 8; ++g)
        {
            const uint32_t gpu = topo->AddGpu("gpu" + std::to_string(g));
            topo->AddLink(gpu, leaves[g / 4], kRate, kDelay, "roce");
        }
        std::vector<uint32_t> up; // leaf0 -> spine links, in the forward direction
        for (uint32_t l : leaves)
        {
            for (uint32_t s : spines)
            {
                const uint32_t link = topo->AddLink(l, s, DataRate("100Gbps"), kDelay, "roce");
                if (l == leaves[0])
                {
                    up.push_back(link);
                }
            }
        }
        Ptr<FlowTransport> t = FlowTransportHelper().Install(topo);
        Deliveries d;
        const uint32_t nFlows = 32;
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            t->Send(i % 4, 4 + (i / 4) % 4, 100 * kPayload, d.Slot());
        }
        uint32_t onSpine0 = 0;
        uint32_t onSpine1 = 0;
        Simulator::Schedule(NanoSeconds(1),
                            [&]()
                            {
                                onSpine0 = t->GetNActiveFlows(up[0], true);
                                onSpine1 = t->GetNActiveFlows(up[1], true);
                            });
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(onSpine0 + onSpine1, nFlows, "every flow crosses one spine");
        NS_TEST_ASSERT_MSG_GT(onSpine0, 4U, "spine0 carries a fair part");
        NS_TEST_ASSERT_MSG_GT(onSpine1, 4U, "spine1 carries a fair part");
        NS_TEST_ASSERT_MSG_EQ(t->GetFlowsCompleted(), nFlows, "all delivered");
        Simulator::Destroy();
    }
};

class FlowRandomMaxMinTestCase : public TestCase
{
public:
    FlowRandomMaxMinTestCase()
        : TestCase("incremental rates equal a from-scratch max-min allocation under random load")
    {
    }

private:
    void DoRun() override
    {
        // Two leaves, three spines of unequal speed, GPUs of unequal speed: bottlenecks move
        // between GPU links and spine links as flows come and go.
        auto topo = Create<ClusterTopology>();
        std::vector<uint32_t> leaves{topo->AddSwitch("leaf0"), topo->AddSwitch("leaf1")};
        const std::vector<DataRate> spineRates{DataRate("40Gbps"), DataRate("25Gbps"),
                                               DataRate("10Gbps")};
        const std::vector<DataRate> gpuRates{DataRate("10Gbps"), DataRate("25Gbps"),
                                             DataRate("40Gbps")};
        // Every GPU reaches its leaf through a NIC, over a PCIe link that is sometimes the
        // slower of the two: the transport keeps only the slower direction of such pairs.
        const std::vector<DataRate> pcieRates{DataRate("16Gbps"), DataRate("100Gbps")};
        const uint32_t nGpus = 12;
        for (uint32_t g = 0; g < nGpus; ++g)
        {
            const uint32_t gpu = topo->AddGpu("gpu" + std::to_string(g));
            const uint32_t nic =
                topo->AddSwitch("nic" + std::to_string(g), ClusterTopology::NodeKind::Nic);
            topo->AddLink(gpu, nic, pcieRates[g % 2], NanoSeconds(200), "pcie");
            topo->AddLink(nic, leaves[g % 2], gpuRates[g % 3], NanoSeconds(500), "roce");
        }
        for (uint32_t s = 0; s < spineRates.size(); ++s)
        {
            const uint32_t spine = topo->AddSwitch("spine" + std::to_string(s));
            for (uint32_t l : leaves)
            {
                topo->AddLink(l, spine, spineRates[s], NanoSeconds(500), "roce");
            }
        }
        Ptr<FlowTransport> t = FlowTransportHelper().Install(topo);
        std::mt19937_64 rng(42);
        const uint32_t nFlows = 400;
        uint32_t delivered = 0;
        double worst = 0;
        uint32_t checks = 0;
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            const uint32_t src = rng() % nGpus;
            const uint32_t dst = (src + 1 + rng() % (nGpus - 1)) % nGpus;
            const uint64_t bytes = rng() % 2000000;
            const Time at = NanoSeconds(rng() % 2000000);
            SendAt(t, at, src, dst, bytes, [&]() { ++delivered; });
            Simulator::Schedule(at + NanoSeconds(rng() % 5000),
                                [&]()
                                {
                                    const double err = t->CheckMaxMinFair();
                                    if (err >= 0)
                                    {
                                        worst = std::max(worst, err);
                                        ++checks;
                                    }
                                });
        }
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(delivered, nFlows, "every flow delivered");
        NS_TEST_ASSERT_MSG_GT(checks, nFlows / 2, "most checks saw a settled state");
        NS_TEST_ASSERT_MSG_EQ_TOL(worst, 0.0, 1e-7, "rates stay max-min fair");
        Simulator::Destroy();
    }
};

class FlowRouteTestCase : public TestCase
{
public:
    FlowRouteTestCase() : TestCase("cached routes are the topology's routes") {}

private:
    void DoRun() override
    {
        // 2 leaves x 3 spines, two GPUs per leaf behind one more switch each: ECMP choices at
        // two levels.
        auto topo = Create<ClusterTopology>();
        std::vector<uint32_t> leaves{topo->AddSwitch("leaf0"), topo->AddSwitch("leaf1")};
        for (uint32_t s = 0; s < 3; ++s)
        {
            const uint32_t spine = topo->AddSwitch("spine" + std::to_string(s));
            for (uint32_t l : leaves)
            {
                topo->AddLink(l, spine, kRate, kDelay, "roce");
                topo->AddLink(l, spine, kRate, kDelay, "roce"); // parallel links: more ECMP
            }
        }
        for (uint32_t g = 0; g < 4; ++g)
        {
            const uint32_t gpu = topo->AddGpu("gpu" + std::to_string(g));
            const uint32_t tor = topo->AddSwitch("tor" + std::to_string(g));
            topo->AddLink(gpu, tor, kRate, kDelay, "pcie");
            topo->AddLink(tor, leaves[g / 2], kRate, kDelay, "roce");
        }
        Ptr<FlowTransport> t = FlowTransportHelper().Install(topo);
        std::mt19937_64 rng(7);
        uint32_t mismatches = 0;
        std::vector<uint32_t> firstSpineLink;
        for (uint32_t i = 0; i < 400; ++i)
        {
            const uint32_t src = rng() % 4;
            const uint32_t dst = (src + 1 + rng() % 3) % 4;
            const uint64_t hash = rng();
            const auto cached = t->GetRoute(src, dst, hash);
            const auto direct = topo->Route(src, dst, hash);
            bool same = cached.size() == direct.size();
            for (size_t h = 0; same && h < cached.size(); ++h)
            {
                same = cached[h].link == direct[h].link && cached[h].forward == direct[h].forward;
            }
            mismatches += same ? 0 : 1;
            if (src / 2 != dst / 2)
            {
                firstSpineLink.push_back(cached[2].link);
            }
        }
        NS_TEST_ASSERT_MSG_EQ(mismatches, 0U, "same hops as ClusterTopology::Route");
        std::sort(firstSpineLink.begin(), firstSpineLink.end());
        const auto distinct =
            std::unique(firstSpineLink.begin(), firstSpineLink.end()) - firstSpineLink.begin();
        NS_TEST_ASSERT_MSG_GT(distinct, 8, "the hash reaches most of the 12 uplinks");
        Simulator::Destroy();
    }
};

class FlowAttributesTestCase : public TestCase
{
public:
    FlowAttributesTestCase() : TestCase("Mtu and HeaderBytes set the wire overhead") {}

private:
    void DoRun() override
    {
        FlowTransportHelper helper;
        helper.SetTransportAttribute("Mtu", UintegerValue(1500));
        helper.SetTransportAttribute("HeaderBytes", UintegerValue(100));
        Ptr<FlowTransport> t = helper.Install(MakeStar({kRate, kRate}, kDelay));
        NS_TEST_ASSERT_MSG_EQ(t->GetPacketCount(1400), 1U, "one packet");
        NS_TEST_ASSERT_MSG_EQ(t->GetPacketCount(1401), 2U, "two packets");
        NS_TEST_ASSERT_MSG_EQ(t->GetWireBytes(2800), 3000U, "two headers");
        NS_TEST_ASSERT_MSG_EQ(t->GetNGpus(), 2U, "GPUs of the topology");
        Simulator::Destroy();
    }
};

class FlowTransportTestSuite : public TestSuite
{
public:
    FlowTransportTestSuite() : TestSuite("phantora-flow-transport", UNIT)
    {
        AddTestCase(new FlowLoneOneLinkTestCase, TestCase::QUICK);
        AddTestCase(new FlowLoneThroughSwitchTestCase, TestCase::QUICK);
        AddTestCase(new FlowSharedLinkTestCase, TestCase::QUICK);
        AddTestCase(new FlowStaggeredTestCase, TestCase::QUICK);
        AddTestCase(new FlowMaxMinTestCase, TestCase::QUICK);
        AddTestCase(new FlowIncastTestCase, TestCase::QUICK);
        AddTestCase(new FlowRingAllReduceTestCase, TestCase::QUICK);
        AddTestCase(new FlowChainRankEndsTestCase, TestCase::QUICK);
        AddTestCase(new FlowEcmpTestCase, TestCase::QUICK);
        AddTestCase(new FlowRandomMaxMinTestCase, TestCase::QUICK);
        AddTestCase(new FlowRouteTestCase, TestCase::QUICK);
        AddTestCase(new FlowAttributesTestCase, TestCase::QUICK);
    }
};

static FlowTransportTestSuite g_flowTransportTestSuite;
