// Link-level flow control and congestion control of the packet-level transport: PFC on
// RoCE, credits on InfiniBand, DCQCN at RoCE senders, and the promise that none of them
// touches an uncongested flow.  Bounds are derived from the configured buffers and rates,
// never from a previous run's output.

#include "nccl/plan.h"
#include "ns3/boolean.h"
#include "ns3/cluster-topology.h"
#include "ns3/double.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/packet-transport-helper.h"
#include "ns3/packet-transport.h"
#include "ns3/phantora-net-device.h"
#include "ns3/phantora-topology-helper.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ns3;
namespace nccl = phantora::nccl;

namespace
{

constexpr uint32_t MTU = 4096;
constexpr uint32_t HEADER = 48;
constexpr uint32_t PAYLOAD = MTU - HEADER;

struct FlowSpec
{
    uint32_t src;
    uint32_t dst;
    uint64_t bytes;
    Time start{0};
};

/// Wire bytes of a \p bytes send: payload plus one header per packet.
uint64_t WireBytes(uint64_t bytes)
{
    const uint64_t packets = bytes == 0 ? 1 : (bytes + PAYLOAD - 1) / PAYLOAD;
    return bytes + packets * HEADER;
}

PacketTransportHelper MakeHelper()
{
    PacketTransportHelper helper;
    helper.SetTransportAttribute("Mtu", UintegerValue(MTU));
    helper.SetTransportAttribute("HeaderBytes", UintegerValue(HEADER));
    return helper;
}

/// Starts \p flows on \p transport and runs the simulation; returns each flow's delivery.
std::vector<Time> RunFlows(Ptr<PacketTransport> transport, const std::vector<FlowSpec>& flows)
{
    std::vector<Time> done(flows.size(), Seconds(-1));
    for (std::size_t i = 0; i < flows.size(); ++i)
    {
        const FlowSpec f = flows[i];
        Simulator::Schedule(f.start,
                            [transport, f, i, &done]() {
                                transport->Send(f.src, f.dst, f.bytes,
                                                [i, &done]() { done[i] = Simulator::Now(); });
                            });
    }
    Simulator::Run();
    return done;
}

/// Largest ingress occupancy relative to its buffer over all devices with a buffer.
double WorstIngressFill(Ptr<PacketTransport> transport)
{
    double worst = 0;
    for (uint32_t l = 0; l < transport->GetTopology()->GetNLinks(); ++l)
    {
        for (bool atB : {false, true})
        {
            Ptr<PhantoraNetDevice> dev = transport->GetDevice(l, atB);
            if (dev->GetIngressBufferBytes() > 0)
            {
                worst = std::max(worst, static_cast<double>(dev->GetMaxIngressBytes()) /
                                            static_cast<double>(dev->GetIngressBufferBytes()));
            }
        }
    }
    return worst;
}

/// Incast: GPUs 1..n-1 each send \p bytes to GPU 0 of a star.
std::vector<FlowSpec> Incast(uint32_t n, uint64_t bytes)
{
    std::vector<FlowSpec> flows;
    for (uint32_t g = 1; g < n; ++g)
    {
        flows.push_back({g, 0, bytes});
    }
    return flows;
}

} // namespace

class PfcIncastTestCase : public TestCase
{
public:
    PfcIncastTestCase()
        : TestCase("PFC keeps a 7-to-1 RoCE incast lossless with small buffers: pauses, no "
                   "overflow, the bottleneck never idles")
    {
    }

private:
    void DoRun() override
    {
        const DataRate rate("400Gbps");
        const Time delay = MicroSeconds(1);
        const uint32_t n = 8;
        const uint64_t bytes = 4 << 20;
        const uint32_t xoff = 64 * 1024;
        PacketTransportHelper helper = MakeHelper();
        helper.SetTransportAttribute("PfcXoffBytes", UintegerValue(xoff));
        helper.SetTransportAttribute("Dcqcn", BooleanValue(false)); // PFC alone
        Ptr<PacketTransport> t =
            helper.Install(PhantoraTopologyHelper::SingleSwitch(n, rate, delay, "roce"));
        const std::vector<Time> done = RunFlows(t, Incast(n, bytes));
        const PacketTransport::Statistics st = t->GetStatistics();

        NS_TEST_ASSERT_MSG_EQ(t->GetFlowsCompleted(), n - 1, "every flow is delivered");
        NS_TEST_ASSERT_MSG_EQ(t->GetBytesDelivered(), (n - 1) * bytes, "no byte is lost");
        NS_TEST_ASSERT_MSG_EQ(st.drops, 0U, "a lossless fabric drops nothing");
        NS_TEST_ASSERT_MSG_GT(st.pauseFramesSent, 0U, "7 senders into one port must pause");
        NS_TEST_ASSERT_MSG_EQ(st.resumeFramesSent, st.pauseFramesSent,
                              "every pause is lifted once the buffer drains");
        NS_TEST_ASSERT_MSG_LT_OR_EQ(WorstIngressFill(t), 1.0,
                                    "no ingress buffer exceeds XOFF + headroom");
        // Each ingress port holds at most XOFF + headroom, so the bottleneck queue is bounded
        // by their sum; without PFC it would grow to nearly the whole incast.
        const uint64_t perPort = t->GetDevice(1, true)->GetIngressBufferBytes();
        NS_TEST_ASSERT_MSG_LT_OR_EQ(st.maxQueueBytes, (n - 1) * perPort,
                                    "the bottleneck queue is bounded by the ingress buffers");
        // PFC pauses senders but never idles the congested port, so the incast ends when the
        // bottleneck has serialized every wire byte (plus one delay in and one out).
        const Time last = *std::max_element(done.begin(), done.end());
        const Time bound =
            rate.CalculateBytesTxTime(static_cast<uint32_t>((n - 1) * WireBytes(bytes)));
        NS_TEST_ASSERT_MSG_GT_OR_EQ(last, bound, "cannot beat the bottleneck");
        NS_TEST_ASSERT_MSG_LT(last.GetSeconds(), bound.GetSeconds() * 1.01 + 4e-6,
                              "the bottleneck stays busy: within 1% of its serialization time");
        Simulator::Destroy();
    }
};

class IbCreditIncastTestCase : public TestCase
{
public:
    IbCreditIncastTestCase()
        : TestCase("InfiniBand credits keep every ingress queue within its buffer in an incast, "
                   "with no pause frames and no loss")
    {
    }

private:
    void DoRun() override
    {
        const DataRate rate("400Gbps");
        const Time delay = MicroSeconds(1);
        const uint32_t n = 8;
        const uint64_t bytes = 4 << 20;
        const uint32_t buffer = 32 * 1024;
        PacketTransportHelper helper = MakeHelper();
        helper.SetTransportAttribute("IbBufferBytes", UintegerValue(buffer));
        Ptr<PacketTransport> t =
            helper.Install(PhantoraTopologyHelper::SingleSwitch(n, rate, delay, "ib"));
        const std::vector<Time> done = RunFlows(t, Incast(n, bytes));
        const PacketTransport::Statistics st = t->GetStatistics();

        NS_TEST_ASSERT_MSG_EQ(t->GetBytesDelivered(), (n - 1) * bytes, "no byte is lost");
        NS_TEST_ASSERT_MSG_EQ(st.pauseFramesSent, 0U, "IB has no PFC");
        NS_TEST_ASSERT_MSG_GT(st.creditStalls, 0U, "senders ran out of credits");
        for (uint32_t g = 0; g < n; ++g)
        {
            // Link g joins GPU g (end a) to the switch (end b): the switch's ingress port.
            Ptr<PhantoraNetDevice> in = t->GetDevice(g, true);
            NS_TEST_ASSERT_MSG_EQ(in->GetIngressBufferBytes(), buffer, "the configured buffer");
            NS_TEST_ASSERT_MSG_LT_OR_EQ(in->GetMaxIngressBytes(), buffer,
                                        "port " << g << " stays within its credits");
        }
        NS_TEST_ASSERT_MSG_GT(t->GetDevice(1, true)->GetMaxIngressBytes(), buffer - 2 * MTU,
                              "a sender's port fills its buffer: credits are what held it");
        NS_TEST_ASSERT_MSG_LT_OR_EQ(st.maxQueueBytes, uint64_t{(n - 1) * buffer},
                                    "the bottleneck queue holds at most all ports' buffers");
        const Time last = *std::max_element(done.begin(), done.end());
        const Time bound =
            rate.CalculateBytesTxTime(static_cast<uint32_t>((n - 1) * WireBytes(bytes)));
        NS_TEST_ASSERT_MSG_LT(last.GetSeconds(), bound.GetSeconds() * 1.01 + 4e-6,
                              "credits never idle the bottleneck");
        Simulator::Destroy();
    }
};

class DcqcnFairnessTestCase : public TestCase
{
public:
    DcqcnFairnessTestCase()
        : TestCase("DCQCN drives two RoCE flows into one port toward half the line rate each and "
                   "keeps the queue far below what PFC alone lets it reach")
    {
    }

private:
    struct Outcome
    {
        std::vector<Time> done;
        PacketTransport::Statistics stats;
        double meanRateA{0}; ///< bits/s, averaged over the samples while both send
        double meanRateB{0};
    };

    Outcome Run(bool dcqcn)
    {
        PacketTransportHelper helper = MakeHelper();
        helper.SetTransportAttribute("Dcqcn", BooleanValue(dcqcn));
        Ptr<PacketTransport> t = helper.Install(
            PhantoraTopologyHelper::SingleSwitch(3, DataRate("400Gbps"), MicroSeconds(1), "roce"));
        Outcome out;
        // Flow A runs alone for 100 us, then B joins: B starts at line rate against A's queue.
        const uint64_t bytes = 64 << 20;
        std::vector<double> ra;
        std::vector<double> rb;
        for (Time s = MicroSeconds(400); s < MicroSeconds(1400); s += MicroSeconds(10))
        {
            Simulator::Schedule(s,
                                [t, &ra, &rb]()
                                {
                                    const DcqcnState* a = t->GetDcqcnState(1, 0);
                                    const DcqcnState* b = t->GetDcqcnState(2, 0);
                                    if (a && b)
                                    {
                                        ra.push_back(a->currentRate);
                                        rb.push_back(b->currentRate);
                                    }
                                });
        }
        out.done = RunFlows(t, {{1, 0, bytes, Seconds(0)}, {2, 0, bytes, MicroSeconds(100)}});
        out.stats = t->GetStatistics();
        if (!ra.empty())
        {
            out.meanRateA = std::accumulate(ra.begin(), ra.end(), 0.0) / ra.size();
            out.meanRateB = std::accumulate(rb.begin(), rb.end(), 0.0) / rb.size();
        }
        Simulator::Destroy();
        return out;
    }

    void DoRun() override
    {
        const Outcome cc = Run(true);
        const Outcome pfcOnly = Run(false);
        NS_TEST_ASSERT_MSG_GT(cc.stats.ecnMarks, 0U, "the shared port marks");
        NS_TEST_ASSERT_MSG_GT(cc.stats.cnpsSent, 0U, "receivers answer marks with CNPs");
        NS_TEST_ASSERT_MSG_GT(cc.stats.rateCuts, 0U, "senders cut their rates");
        NS_TEST_ASSERT_MSG_EQ(cc.stats.drops, 0U, "lossless");
        const double fair = 200e9;
        NS_TEST_ASSERT_MSG_EQ_TOL(cc.meanRateA, fair, 0.25 * fair, "flow A near its fair share");
        NS_TEST_ASSERT_MSG_EQ_TOL(cc.meanRateB, fair, 0.25 * fair, "flow B near its fair share");
        // ECN starts at Kmin and marks every packet above Kmax (200 KB): DCQCN holds the
        // queue near there, while PFC alone lets it fill to XOFF and pause.
        NS_TEST_ASSERT_MSG_GT(pfcOnly.stats.pauseFramesSent, 0U, "without DCQCN, PFC pauses");
        NS_TEST_ASSERT_MSG_LT(cc.stats.maxQueueBytes, pfcOnly.stats.maxQueueBytes,
                              "DCQCN keeps the bottleneck queue shorter than PFC alone");
        NS_TEST_ASSERT_MSG_LT(cc.stats.pauseFramesSent, pfcOnly.stats.pauseFramesSent,
                              "DCQCN avoids most pauses");
    }
};

class UncongestedFormulaTestCase : public TestCase
{
public:
    UncongestedFormulaTestCase()
        : TestCase("on every link kind a lone flow and a ring all-reduce on a star keep the "
                   "documented formula: flow and congestion control add nothing")
    {
    }

private:
    void DoRun() override
    {
        const DataRate rate("400Gbps");
        const Time delay = MicroSeconds(1);
        for (const std::string kind : {"nvlink", "pcie", "ib", "roce", "ethernet"})
        {
            // Lone flow, two hops: sum of per-packet TxTime + the largest packet's + 2 delays.
            const uint64_t bytes = 16 << 20;
            Ptr<PacketTransport> t =
                MakeHelper().Install(PhantoraTopologyHelper::SingleSwitch(2, rate, delay, kind));
            const std::vector<Time> done = RunFlows(t, {{0, 1, bytes}});
            const uint64_t full = bytes / PAYLOAD;
            const uint32_t rest = static_cast<uint32_t>(bytes - full * PAYLOAD);
            Time expected = rate.CalculateBytesTxTime(MTU) * static_cast<int64_t>(full);
            if (rest > 0)
            {
                expected += rate.CalculateBytesTxTime(rest + HEADER);
            }
            expected += rate.CalculateBytesTxTime(MTU) + delay + delay;
            NS_TEST_ASSERT_MSG_EQ(done[0], expected, kind << ": lone flow exactly as documented");
            const PacketTransport::Statistics st = t->GetStatistics();
            NS_TEST_ASSERT_MSG_EQ(st.pauseFramesSent + st.ecnMarks + st.creditStalls + st.rateCuts,
                                  0U, kind << ": no flow-control or congestion event");
            Simulator::Destroy();

            // Ring all-reduce over 8 GPUs: 2(n-1) uncontended two-hop steps.
            const uint32_t n = 8;
            const uint64_t ar = 8 << 20;
            Ptr<PacketTransport> r =
                MakeHelper().Install(PhantoraTopologyHelper::SingleSwitch(n, rate, delay, kind));
            std::vector<uint32_t> ranks(n);
            std::iota(ranks.begin(), ranks.end(), 0);
            Time finished = Seconds(-1);
            NcclPlanExecutor::Start(r, nccl::MakeRingAllReducePlan(n, ar), ranks,
                                    [&finished]() { finished = Simulator::Now(); });
            Simulator::Run();
            const uint64_t chunk = (ar + n - 1) / n;
            const uint64_t k = (chunk + PAYLOAD - 1) / PAYLOAD;
            const uint64_t last = chunk - (k - 1) * PAYLOAD;
            const Time step = rate.CalculateBytesTxTime(MTU) * static_cast<int64_t>(k - 1) +
                              rate.CalculateBytesTxTime(static_cast<uint32_t>(last + HEADER)) +
                              rate.CalculateBytesTxTime(MTU) + delay + delay;
            NS_TEST_ASSERT_MSG_EQ(finished, step * static_cast<int64_t>(2 * (n - 1)),
                                  kind << ": ring all-reduce exactly as documented");
            Simulator::Destroy();
        }
    }
};

class IdleResetTestCase : public TestCase
{
public:
    IdleResetTestCase()
        : TestCase("after the network goes idle it behaves exactly as a fresh one continuing the "
                   "flow numbering, DCQCN and ECN included (checkpoint safety)")
    {
    }

private:
    /// Second-round delivery times of a RoCE incast; \p firstRound: run a congested
    /// round before it on the same transport, else start fresh with the numbering it left.
    static std::vector<Time> SecondRound(bool firstRound)
    {
        const uint32_t n = 8;
        const std::vector<FlowSpec> round = Incast(n, 2 << 20);
        Ptr<PacketTransport> t = MakeHelper().Install(
            PhantoraTopologyHelper::SingleSwitch(n, DataRate("400Gbps"), MicroSeconds(1), "roce"));
        std::vector<FlowSpec> flows;
        if (firstRound)
        {
            flows = round;
        }
        else
        {
            t->SetFlowNumbering(round.size());
        }
        for (FlowSpec f : round)
        {
            f.start = MilliSeconds(5);
            flows.push_back(f);
        }
        std::vector<Time> done = RunFlows(t, flows);
        const uint64_t cuts = t->GetStatistics().rateCuts;
        Simulator::Destroy();
        done.erase(done.begin(), done.end() - static_cast<std::ptrdiff_t>(round.size()));
        done.push_back(Seconds(static_cast<double>(cuts > 0)));
        return done;
    }

    void DoRun() override
    {
        const std::vector<Time> continued = SecondRound(true);
        const std::vector<Time> fresh = SecondRound(false);
        NS_TEST_ASSERT_MSG_EQ(continued.back(), Seconds(1), "the incast made DCQCN cut rates");
        for (std::size_t i = 0; i + 1 < fresh.size(); ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(continued[i], fresh[i], "flow " << i << " of the second round");
        }
    }
};

class LinkKindErrorsTestCase : public TestCase
{
public:
    LinkKindErrorsTestCase()
        : TestCase(
              "an unknown link kind and inconsistent PFC and ECN thresholds are refused by name")
    {
    }

private:
    void DoRun() override
    {
        bool threw = false;
        try
        {
            MakeHelper().Install(PhantoraTopologyHelper::SingleSwitch(2, DataRate("100Gbps"),
                                                                      Seconds(0), "omnipath"));
        }
        catch (const std::invalid_argument& e)
        {
            threw = std::string(e.what()).find("omnipath") != std::string::npos &&
                    std::string(e.what()).find("expected") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "unknown kind named, with the expected ones");
        threw = false;
        try
        {
            PacketTransportHelper helper = MakeHelper();
            helper.SetTransportAttribute("EcnKminBytes", UintegerValue(300000));
            helper.SetTransportAttribute("EcnKmaxBytes", UintegerValue(200000));
            helper.Install(
                PhantoraTopologyHelper::SingleSwitch(2, DataRate("100Gbps"), Seconds(0), "roce"));
        }
        catch (const std::invalid_argument& e)
        {
            threw = std::string(e.what()).find("EcnKminBytes") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "Kmin above Kmax is refused, naming the attribute");
        Simulator::Destroy();
    }
};

class LosslessFabricTestSuite : public TestSuite
{
public:
    LosslessFabricTestSuite() : TestSuite("phantora-lossless-fabric", UNIT)
    {
        AddTestCase(new UncongestedFormulaTestCase, TestCase::QUICK);
        AddTestCase(new PfcIncastTestCase, TestCase::QUICK);
        AddTestCase(new IbCreditIncastTestCase, TestCase::QUICK);
        AddTestCase(new DcqcnFairnessTestCase, TestCase::QUICK);
        AddTestCase(new IdleResetTestCase, TestCase::QUICK);
        AddTestCase(new LinkKindErrorsTestCase, TestCase::QUICK);
    }
};

static LosslessFabricTestSuite g_losslessFabricTestSuite;
