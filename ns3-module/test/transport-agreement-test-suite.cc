// The flow-level and the packet-level transport on the same collectives and topologies:
// where nothing contends they must agree within 5%; where links are shared they may not,
// and the tests below show by how much and why (see also doc/phantora.rst, "Flow-level
// versus packet-level").

#include "nccl/plan.h"
#include "ns3/boolean.h"
#include "ns3/cluster-topology.h"
#include "ns3/flow-transport-helper.h"
#include "ns3/flow-transport.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/packet-transport-helper.h"
#include "ns3/packet-transport.h"
#include "ns3/phantora-topology-helper.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

using namespace ns3;
namespace nccl = phantora::nccl;

namespace
{

constexpr uint32_t MTU = 4096;
constexpr uint32_t HEADER = 48;

/// Builds a fresh transport of one kind over a fresh copy of a topology.
using TransportFactory = std::function<Ptr<PhantoraTransport>(Ptr<ClusterTopology>)>;

Ptr<PhantoraTransport> MakePacket(Ptr<ClusterTopology> topology)
{
    PacketTransportHelper helper;
    helper.SetTransportAttribute("Mtu", UintegerValue(MTU));
    helper.SetTransportAttribute("HeaderBytes", UintegerValue(HEADER));
    return helper.Install(topology);
}

Ptr<PhantoraTransport> MakeFlow(Ptr<ClusterTopology> topology)
{
    FlowTransportHelper helper;
    helper.SetTransportAttribute("Mtu", UintegerValue(MTU));
    helper.SetTransportAttribute("HeaderBytes", UintegerValue(HEADER));
    return helper.Install(topology);
}

/// NCCL's ring plan with the SM copy-rate cap lifted, so that the network alone decides
/// and a disagreement between transports cannot hide behind the cap.
nccl::Plan RingPlan(nccl::CollectiveKind kind, uint32_t nRanks, uint32_t ranksPerNode,
                    uint64_t bytes, uint32_t channels = 0)
{
    nccl::Config config;
    config.algorithm = "ring";
    config.protocol = "simple";
    config.simple.channelBytesPerSecond = 0;
    if (channels == 0)
    {
        return nccl::MakePlan(kind, nccl::CommShape{nRanks, ranksPerNode}, bytes, config);
    }
    nccl::Choice choice{nccl::Algorithm::Ring, nccl::Protocol::Simple, channels};
    return nccl::MakePlan(kind, nccl::CommShape{nRanks, ranksPerNode}, bytes, config, choice);
}

/// Completion of \p plan over every GPU of \p topology on the transport \p make builds.
Time RunPlan(Ptr<ClusterTopology> topology, const TransportFactory& make, const nccl::Plan& plan,
             std::vector<uint32_t> ranks = {})
{
    Ptr<PhantoraTransport> transport = make(topology);
    if (ranks.empty())
    {
        ranks.resize(transport->GetNGpus());
        std::iota(ranks.begin(), ranks.end(), 0);
    }
    Time done = Seconds(-1);
    NcclPlanExecutor::Start(transport, plan, ranks, [&done]() { done = Simulator::Now(); });
    Simulator::Run();
    Simulator::Destroy();
    return done;
}

struct FlowSpec
{
    uint32_t src;
    uint32_t dst;
    uint64_t bytes;
};

/// Delivery instant of each of \p flows, all started at 0.
std::vector<Time> RunFlows(Ptr<ClusterTopology> topology, const TransportFactory& make,
                           const std::vector<FlowSpec>& flows)
{
    Ptr<PhantoraTransport> transport = make(topology);
    std::vector<Time> done(flows.size(), Seconds(-1));
    for (std::size_t i = 0; i < flows.size(); ++i)
    {
        transport->Send(flows[i].src, flows[i].dst, flows[i].bytes,
                        [i, &done]() { done[i] = Simulator::Now(); });
    }
    Simulator::Run();
    Simulator::Destroy();
    return done;
}

double RelDiff(Time packet, Time flow)
{
    return std::abs(packet.GetSeconds() - flow.GetSeconds()) / flow.GetSeconds();
}

/// Two 8-GPU NVLink servers, one 400 Gb/s NIC per GPU, a rail-optimised fabric of \p kind.
Ptr<ClusterTopology> TwoNodes(const std::string& kind, double oversubscription = 1.0,
                              uint32_t spines = 0)
{
    NodeSpec node;
    FabricSpec fabric;
    fabric.kind = kind;
    fabric.oversubscription = oversubscription;
    fabric.spines = spines;
    return PhantoraTopologyHelper::MultiNode(2, node, fabric);
}

} // namespace

class UncongestedAgreementTestCase : public TestCase
{
public:
    UncongestedAgreementTestCase()
        : TestCase("flow- and packet-level agree within 5% on NCCL ring all-reduce (16 and 64 "
                   "MiB, 2 channels, one NVSwitch and two rail-optimised nodes over RoCE and IB) "
                   "and a 64 MiB transfer")
    {
    }

private:
    void Check(const std::string& what, Time packet, Time flow)
    {
        NS_TEST_ASSERT_MSG_GT(flow, Time(0), what << ": flow-level run completes");
        NS_TEST_ASSERT_MSG_GT(packet, Time(0), what << ": packet-level run completes");
        std::clog << "phantora-transport-agreement: " << what << ": flow " << flow.As(Time::US)
                  << ", packet " << packet.As(Time::US) << "\n";
        NS_TEST_ASSERT_MSG_LT_OR_EQ(RelDiff(packet, flow), 0.05,
                                    what << ": packet " << packet.As(Time::US) << " vs flow "
                                         << flow.As(Time::US));
    }

    void DoRun() override
    {
        for (const uint64_t bytes : {uint64_t{16} << 20, uint64_t{64} << 20})
        {
            const std::string size = std::to_string(bytes >> 20) + " MiB";
            auto star = []()
            {
                return PhantoraTopologyHelper::SingleSwitch(8, DataRate("3600Gbps"),
                                                            NanoSeconds(500), "nvlink");
            };
            const nccl::Plan onStar = RingPlan(nccl::CollectiveKind::AllReduce, 8, 8, bytes, 2);
            Check("all-reduce " + size + ", 8 GPUs on one NVSwitch",
                  RunPlan(star(), MakePacket, onStar), RunPlan(star(), MakeFlow, onStar));
            for (const std::string kind : {"roce", "ib"})
            {
                const nccl::Plan plan = RingPlan(nccl::CollectiveKind::AllReduce, 16, 8, bytes, 2);
                Check("all-reduce " + size + ", 2 nodes x 8 GPUs over " + kind,
                      RunPlan(TwoNodes(kind), MakePacket, plan),
                      RunPlan(TwoNodes(kind), MakeFlow, plan));
            }
        }
        for (const std::string kind : {"roce", "ib"})
        {
            // GPU 0 of node 0 to GPU 0 of node 1: NVLink-free, PCIe - NIC - leaf - NIC - PCIe.
            const std::vector<FlowSpec> p2p{{0, 8, uint64_t{64} << 20}};
            Check("64 MiB point-to-point across nodes over " + kind,
                  RunFlows(TwoNodes(kind), MakePacket, p2p)[0],
                  RunFlows(TwoNodes(kind), MakeFlow, p2p)[0]);
        }
    }
};

class CongestedDisagreementTestCase : public TestCase
{
public:
    CongestedDisagreementTestCase()
        : TestCase("where links are shared the transports differ: incast onto one GPU, an "
                   "oversubscribed spine, many channels on one link")
    {
    }

private:
    static Ptr<PhantoraTransport> MakePacketWithoutDcqcn(Ptr<ClusterTopology> topology)
    {
        PacketTransportHelper helper;
        helper.SetTransportAttribute("Mtu", UintegerValue(MTU));
        helper.SetTransportAttribute("HeaderBytes", UintegerValue(HEADER));
        helper.SetTransportAttribute("Dcqcn", BooleanValue(false));
        return helper.Install(topology);
    }

    static Time Last(const std::vector<Time>& v) { return *std::max_element(v.begin(), v.end()); }

    static void Report(const std::string& what, Time flow, Time packet)
    {
        std::clog << "phantora-transport-agreement: " << what << ": flow " << flow.As(Time::US)
                  << ", packet " << packet.As(Time::US) << " (" << std::showpos
                  << 100 * (packet.GetSeconds() / flow.GetSeconds() - 1) << std::noshowpos
                  << "%)\n";
    }

    /**
     * Incast: 7 GPUs of a 400 Gb/s star send 8 MiB each to GPU 0.  Max-min gives each
     * flow 1/7 of the bottleneck at once and keeps it busy; so does PFC (pauses hold the
     * senders back, the FIFO at the bottleneck never empties), and so do IB credits: all
     * three end when the bottleneck has serialized every byte.  DCQCN does not: the 7 flows
     * start at line rate, the queue they build keeps being marked while it drains, and
     * every CNP halves the rates again (alpha stays near 1 while CNPs arrive every 50 us,
     * faster than alpha decays); then recovery is additive, 40 Mb/s per 55 us, tiny at
     * 400 Gb/s, so the bottleneck runs half idle.
     */
    void Incast()
    {
        std::vector<FlowSpec> flows;
        for (uint32_t g = 1; g < 8; ++g)
        {
            flows.push_back({g, 0, uint64_t{8} << 20});
        }
        auto star = [](const std::string& kind) {
            return PhantoraTopologyHelper::SingleSwitch(8, DataRate("400Gbps"), MicroSeconds(1),
                                                        kind);
        };
        const Time flow = Last(RunFlows(star("roce"), MakeFlow, flows));
        const Time dcqcn = Last(RunFlows(star("roce"), MakePacket, flows));
        const Time pfc = Last(RunFlows(star("roce"), MakePacketWithoutDcqcn, flows));
        const Time ib = Last(RunFlows(star("ib"), MakePacket, flows));
        Report("incast 7 x 8 MiB, RoCE, PFC + DCQCN", flow, dcqcn);
        Report("incast 7 x 8 MiB, RoCE, PFC only", flow, pfc);
        Report("incast 7 x 8 MiB, IB credits", flow, ib);
        NS_TEST_ASSERT_MSG_LT(RelDiff(pfc, flow), 0.01, "PFC alone keeps the bottleneck busy");
        NS_TEST_ASSERT_MSG_LT(RelDiff(ib, flow), 0.01, "credits keep the bottleneck busy");
        NS_TEST_ASSERT_MSG_GT(dcqcn.GetSeconds(), 1.5 * flow.GetSeconds(),
                              "DCQCN's over-cut and slow recovery leave the bottleneck idle");
    }

    /**
     * All-to-all over 2 nodes whose leaves share one spine at 4:1: every cross-rail byte
     * crosses an uplink carrying a quarter of its leaf's downlinks.  Max-min hands each flow
     * its share of the uplink and the full rate of every other link at once.  On packets,
     * a NIC port feeds flows to several uplinks; when one of those backs up, PFC pauses (or
     * missing credits stop) the whole port, head-of-line blocking the flows to uplinks that
     * have room; DCQCN, reacting to the marked uplink queues, cuts far below the fair share.
     */
    void OversubscribedSpine()
    {
        auto fabric = [](const std::string& kind)
        {
            FabricSpec f;
            f.kind = kind;
            f.spines = 1;
            f.oversubscription = 4.0;
            return PhantoraTopologyHelper::MultiNode(2, NodeSpec{}, f);
        };
        const nccl::Plan plan =
            RingPlan(nccl::CollectiveKind::AllToAll, 16, 8, uint64_t{64} << 20, 2);
        const Time flow = RunPlan(fabric("roce"), MakeFlow, plan);
        const Time dcqcn = RunPlan(fabric("roce"), MakePacket, plan);
        const Time pfc = RunPlan(fabric("roce"), MakePacketWithoutDcqcn, plan);
        const Time ib = RunPlan(fabric("ib"), MakePacket, plan);
        Report("all-to-all 64 MiB, 2 nodes, 4:1 spine, RoCE, PFC + DCQCN", flow, dcqcn);
        Report("all-to-all 64 MiB, 2 nodes, 4:1 spine, RoCE, PFC only", flow, pfc);
        Report("all-to-all 64 MiB, 2 nodes, 4:1 spine, IB credits", flow, ib);
        NS_TEST_ASSERT_MSG_GT(pfc.GetSeconds(), 1.02 * flow.GetSeconds(),
                              "PFC's head-of-line blocking costs time max-min does not see");
        NS_TEST_ASSERT_MSG_GT(ib.GetSeconds(), 1.02 * flow.GetSeconds(),
                              "so does credit starvation of a shared port");
        NS_TEST_ASSERT_MSG_GT(dcqcn.GetSeconds(), 1.5 * flow.GetSeconds(),
                              "DCQCN cuts far below the fair share");
    }

    /**
     * 16 NCCL channels of one ring share every NVLink.  Fluid sharing gives the channels'
     * identical flows identical rates, so they end together, every channel then waits out
     * the same per-step latency and the link idles meanwhile, step after step.  Packets
     * interleave round-robin, the channels' flows end a few packets apart, the earliest
     * channel's next step runs alone for a moment, and the channels drift apart until one
     * channel's latency hides behind another's data: the packet level is faster.
     */
    void ManyChannels()
    {
        auto star = []()
        {
            return PhantoraTopologyHelper::SingleSwitch(8, DataRate("3600Gbps"), NanoSeconds(500),
                                                        "nvlink");
        };
        const nccl::Plan plan =
            RingPlan(nccl::CollectiveKind::AllReduce, 8, 8, uint64_t{64} << 20, 16);
        const Time flow = RunPlan(star(), MakeFlow, plan);
        const Time packet = RunPlan(star(), MakePacket, plan);
        Report("ring all-reduce 64 MiB, 16 channels, one NVSwitch", flow, packet);
        NS_TEST_ASSERT_MSG_LT(packet.GetSeconds(), 0.95 * flow.GetSeconds(),
                              "lock-step fluid channels leave latency gaps packets fill");
    }

    void DoRun() override
    {
        Incast();
        OversubscribedSpine();
        ManyChannels();
    }
};

class TransportAgreementTestSuite : public TestSuite
{
public:
    TransportAgreementTestSuite() : TestSuite("phantora-transport-agreement", UNIT)
    {
        AddTestCase(new UncongestedAgreementTestCase, TestCase::QUICK);
        AddTestCase(new CongestedDisagreementTestCase, TestCase::QUICK);
    }
};

static TransportAgreementTestSuite g_transportAgreementTestSuite;
