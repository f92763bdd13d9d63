// Expected times are computed the way the model implies: one CalculateBytesTxTime per
// packet, rounded by Time itself, then summed.  That keeps every comparison exact at
// whatever Time resolution the runner uses, so the suite never calls SetResolution.

#include "nccl/plan.h"
#include "ns3/cluster-topology.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/packet-transport-helper.h"
#include "ns3/packet-transport.h"
#include "ns3/packet.h"
#include "ns3/phantora-channel.h"
#include "ns3/phantora-header.h"
#include "ns3/phantora-net-device.h"
#include "ns3/phantora-topology-helper.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

using namespace ns3;
namespace nccl = phantora::nccl;

namespace
{

constexpr uint32_t MTU = 4096;
constexpr uint32_t HEADER = 48;
constexpr uint32_t PAYLOAD = MTU - HEADER;

/// Wire sizes of the packets of a \p bytes send, as the transport cuts it.
std::vector<uint32_t> WireSizes(uint64_t bytes, uint32_t payload = PAYLOAD,
                                uint32_t header = HEADER)
{
    std::vector<uint32_t> sizes;
    if (bytes == 0)
    {
        sizes.push_back(header);
        return sizes;
    }
    for (uint64_t left = bytes; left > 0;)
    {
        const auto p = static_cast<uint32_t>(std::min<uint64_t>(payload, left));
        sizes.push_back(p + header);
        left -= p;
    }
    return sizes;
}

Time SumTxTime(DataRate rate, const std::vector<uint32_t>& sizes)
{
    Time sum(0);
    for (uint32_t s : sizes)
    {
        sum += rate.CalculateBytesTxTime(s);
    }
    return sum;
}

/// One flow alone through one switch: the formula documented in packet-transport.h.
/// The second link adds the largest packet's time: a short last packet would otherwise
/// overtake the full one ahead of it, which it cannot, so it waits at the switch.
Time TwoHopTime(DataRate rate, Time delay, uint64_t bytes)
{
    const std::vector<uint32_t> sizes = WireSizes(bytes);
    const uint32_t largest = *std::max_element(sizes.begin(), sizes.end());
    return SumTxTime(rate, sizes) + rate.CalculateBytesTxTime(largest) + delay + delay;
}

/// FIFO service of packets arriving at \p arrivals (ascending) on an idle link: the
/// instants each one is fully serialized.
std::vector<Time> ServeFifo(DataRate rate, const std::vector<Time>& arrivals,
                            const std::vector<uint32_t>& sizes)
{
    std::vector<Time> done;
    Time free(0);
    for (std::size_t i = 0; i < arrivals.size(); ++i)
    {
        free = std::max(free, arrivals[i]) + rate.CalculateBytesTxTime(sizes[i]);
        done.push_back(free);
    }
    return done;
}

/// The closed form documented in packet-transport.h for a ring all-reduce on a star.
Time RingAllReduceTime(uint32_t n, uint64_t bytes, DataRate rate, Time delay)
{
    const uint64_t chunk = (bytes + n - 1) / n;
    const auto largest = static_cast<uint32_t>(std::min<uint64_t>(MTU, chunk + HEADER));
    const Time step =
        SumTxTime(rate, WireSizes(chunk)) + rate.CalculateBytesTxTime(largest) + delay + delay;
    return step * static_cast<int64_t>(2 * (n - 1));
}

Ptr<PacketTransport> InstallDefault(Ptr<ClusterTopology> topology)
{
    PacketTransportHelper helper;
    helper.SetTransportAttribute("Mtu", UintegerValue(MTU));
    helper.SetTransportAttribute("HeaderBytes", UintegerValue(HEADER));
    return helper.Install(topology);
}

/// Completion of a ring all-reduce of \p bytes on SingleSwitch(n, rate, delay).
Time RunRingAllReduce(uint32_t n, uint64_t bytes, DataRate rate, Time delay,
                      Ptr<PacketTransport>* keep = nullptr)
{
    Ptr<PacketTransport> transport =
        InstallDefault(PhantoraTopologyHelper::SingleSwitch(n, rate, delay));
    std::vector<uint32_t> ranks(n);
    std::iota(ranks.begin(), ranks.end(), 0);
    Time done = Seconds(-1);
    NcclPlanExecutor::Start(transport, nccl::MakeRingAllReducePlan(n, bytes), ranks,
                            [&done]() { done = Simulator::Now(); });
    Simulator::Run();
    if (keep)
    {
        *keep = transport;
    }
    Simulator::Destroy();
    return done;
}

} // namespace

class PhantoraHeaderTestCase : public TestCase
{
public:
    PhantoraHeaderTestCase()
        : TestCase("header carries its fields then zero padding up to the configured size")
    {
    }

private:
    void DoRun() override
    {
        PhantoraHeader h(HEADER);
        h.SetFlowId(0x0123456789abcdefULL);
        h.SetSrcGpu(7);
        h.SetDstGpu(0xfffffffeU);
        h.SetPayloadBytes(4048);
        h.SetSeq(0x89abcdefU);
        h.SetCe(true);
        Ptr<Packet> p = Create<Packet>(100);
        p->AddHeader(h);
        NS_TEST_ASSERT_MSG_EQ(p->GetSize(), 100 + HEADER, "wire size = payload + header bytes");

        std::vector<uint8_t> bytes(p->GetSize());
        p->CopyData(bytes.data(), bytes.size());
        for (uint32_t i = PhantoraHeader::FIELD_BYTES; i < HEADER; ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(uint32_t{bytes[i]}, 0U, "padding is zero");
        }
        NS_TEST_ASSERT_MSG_EQ(uint32_t{bytes[0]}, 0x01U, "flow id first, network byte order");

        PhantoraHeader r;
        NS_TEST_ASSERT_MSG_EQ(p->RemoveHeader(r), HEADER, "the padding is consumed too");
        NS_TEST_ASSERT_MSG_EQ(r.GetFlowId(), 0x0123456789abcdefULL, "flow id");
        NS_TEST_ASSERT_MSG_EQ(r.GetSrcGpu(), 7U, "src");
        NS_TEST_ASSERT_MSG_EQ(r.GetDstGpu(), 0xfffffffeU, "dst");
        NS_TEST_ASSERT_MSG_EQ(r.GetPayloadBytes(), 4048U, "payload bytes");
        NS_TEST_ASSERT_MSG_EQ(r.GetSeq(), 0x89abcdefU, "packet index");
        NS_TEST_ASSERT_MSG_EQ(r.GetCe(), true, "ECN CE read back");
        NS_TEST_ASSERT_MSG_LT_OR_EQ(PhantoraHeader::FIELD_BYTES, 24U,
                                    "the fields fit InfiniBand's 26-byte header");
        NS_TEST_ASSERT_MSG_EQ(r.GetSerializedSize(), HEADER, "size read back");
        NS_TEST_ASSERT_MSG_EQ(p->GetSize(), 100U, "payload left");

        PhantoraHeader exact(PhantoraHeader::FIELD_BYTES);
        NS_TEST_ASSERT_MSG_EQ(exact.GetSerializedSize(), PhantoraHeader::FIELD_BYTES,
                              "no padding allowed");
        bool threw = false;
        try
        {
            PhantoraHeader tooSmall(PhantoraHeader::FIELD_BYTES - 1);
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "a size below the field bytes is rejected");
    }
};

class DirectLinkTestCase : public TestCase
{
public:
    DirectLinkTestCase()
        : TestCase("one direct link delivers after the sum of per-packet TxTime plus delay")
    {
    }

private:
    void DoRun() override
    {
        // 100 Gbps: a full packet takes 327.68 ns, so per-packet rounding is exercised.
        const DataRate rate("100Gbps");
        const Time delay = NanoSeconds(1500);
        const Time start = MicroSeconds(3);
        for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{(1 << 20) + 1234}, uint64_t{0}})
        {
            Ptr<PacketTransport> t =
                InstallDefault(PhantoraTopologyHelper::DirectPair(rate, delay, "nvlink"));
            uint32_t calls = 0;
            Time done;
            Simulator::Schedule(start,
                                [&]()
                                {
                                    t->Send(0, 1, bytes,
                                            [&]()
                                            {
                                                ++calls;
                                                done = Simulator::Now();
                                            });
                                });
            Simulator::Run();
            const std::vector<uint32_t> sizes = WireSizes(bytes);
            NS_TEST_ASSERT_MSG_EQ(calls, 1U, "delivered exactly once");
            NS_TEST_ASSERT_MSG_EQ(done, start + SumTxTime(rate, sizes) + delay, "delivery time");
            NS_TEST_ASSERT_MSG_EQ(t->GetPacketsSent(), sizes.size(), "packet count");
            NS_TEST_ASSERT_MSG_EQ(t->GetBytesDelivered(), bytes, "payload delivered");
            NS_TEST_ASSERT_MSG_EQ(t->GetDevice(0, false)->GetTxBytes(),
                                  std::accumulate(sizes.begin(), sizes.end(), uint64_t{0}),
                                  "wire bytes sent");
            NS_TEST_ASSERT_MSG_EQ(t->GetDevice(0, true)->GetTxPackets(), 0U, "reverse idle");
            Simulator::Destroy();
        }
    }
};

class TwoHopTestCase : public TestCase
{
public:
    TwoHopTestCase()
        : TestCase("through one switch the last packet crosses the second link after the first "
                   "link drained")
    {
    }

private:
    void DoRun() override
    {
        const DataRate rate("100Gbps");
        const Time delay = NanoSeconds(500);
        for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{(1 << 20) + 1234}, uint64_t{0}})
        {
            Ptr<PacketTransport> t =
                InstallDefault(PhantoraTopologyHelper::SingleSwitch(2, rate, delay, "nvlink"));
            uint32_t calls = 0;
            Time done;
            t->Send(1, 0, bytes,
                    [&]()
                    {
                        ++calls;
                        done = Simulator::Now();
                    });
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ(calls, 1U, "delivered exactly once");
            NS_TEST_ASSERT_MSG_EQ(done, TwoHopTime(rate, delay, bytes), "store-and-forward time");
            // Cross-check against serving the packets one by one at the switch.
            const std::vector<uint32_t> sizes = WireSizes(bytes);
            std::vector<Time> arrivals = ServeFifo(rate, std::vector<Time>(sizes.size()), sizes);
            for (Time& a : arrivals)
            {
                a += delay;
            }
            NS_TEST_ASSERT_MSG_EQ(done, ServeFifo(rate, arrivals, sizes).back() + delay, "FIFO");
            NS_TEST_ASSERT_MSG_EQ(t->GetPacketTransmissions(), 2 * WireSizes(bytes).size(),
                                  "every packet crosses two links");
            Simulator::Destroy();
        }
    }
};

class SharedEgressTestCase : public TestCase
{
public:
    SharedEgressTestCase()
        : TestCase("two flows out of one GPU share its link round-robin, one packet each")
    {
    }

private:
    void DoRun() override
    {
        const DataRate rate("100Gbps");
        const Time delay = NanoSeconds(500);
        const uint64_t bytes = (1 << 20) + 1234;
        Ptr<PacketTransport> t =
            InstallDefault(PhantoraTopologyHelper::SingleSwitch(3, rate, delay, "nvlink"));
        Time doneA;
        Time doneB;
        uint32_t calls = 0;
        t->Send(0, 1, bytes,
                [&]()
                {
                    ++calls;
                    doneA = Simulator::Now();
                });
        t->Send(0, 2, bytes,
                [&]()
                {
                    ++calls;
                    doneB = Simulator::Now();
                });
        Simulator::Run();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(calls, 2U, "each flow delivered once");

        // The GPU link carries A1 B1 A2 B2 ... Ak Bk back to back (round-robin, A asked
        // first); the switch ports to the two receivers are never contended.  With C the
        // sum of one flow's TxTimes, F a full packet's and T the last packet's, Ak leaves
        // the GPU at 2C - T and Bk at 2C.  A's packets reach the switch two packet times
        // apart, so none waits there: A finishes at exactly 2C + 2d, twice the single-flow
        // serialization plus latency.  Bk crosses its second link after itself or after
        // B(k-1), whichever ends later: 2C + max(T, F - T) + 2d, less than one packet time
        // after A.
        const std::vector<uint32_t> sizes = WireSizes(bytes);
        const Time c = SumTxTime(rate, sizes);
        const Time full = rate.CalculateBytesTxTime(MTU);
        const Time last = rate.CalculateBytesTxTime(sizes.back());
        NS_TEST_ASSERT_MSG_EQ(doneA, c + c + delay + delay, "first flow: 2C + 2d");
        NS_TEST_ASSERT_MSG_EQ(doneB, c + c + std::max(last, full - last) + delay + delay,
                              "second flow: 2C + max(T, F - T) + 2d");

        // The same, packet by packet: interleave on the GPU link, then serve each flow's
        // packets FIFO on its own switch port.
        std::vector<uint32_t> wire;
        for (uint32_t s : sizes)
        {
            wire.push_back(s);
            wire.push_back(s);
        }
        const std::vector<Time> firstHop = ServeFifo(rate, std::vector<Time>(wire.size()), wire);
        std::vector<Time> arrA;
        std::vector<Time> arrB;
        for (std::size_t i = 0; i < firstHop.size(); ++i)
        {
            (i % 2 == 0 ? arrA : arrB).push_back(firstHop[i] + delay);
        }
        NS_TEST_ASSERT_MSG_EQ(doneA, ServeFifo(rate, arrA, sizes).back() + delay, "FIFO A");
        NS_TEST_ASSERT_MSG_EQ(doneB, ServeFifo(rate, arrB, sizes).back() + delay, "FIFO B");
        NS_TEST_ASSERT_MSG_EQ((doneB - doneA < full), true, "both finish within a packet time");
    }
};

class RingAllReduceTestCase : public TestCase
{
public:
    RingAllReduceTestCase()
        : TestCase("ring all-reduce on a star takes 2(n-1) two-hop chunk transfers")
    {
    }

private:
    void DoRun() override
    {
        const DataRate rate("200Gbps");
        const Time delay = NanoSeconds(700);
        // 1 MiB + 7: chunks are not a multiple of the payload for n = 2 and n = 4.
        const uint64_t bytes = (1 << 20) + 7;
        for (uint32_t n : {2U, 4U})
        {
            Ptr<PacketTransport> t;
            const Time done = RunRingAllReduce(n, bytes, rate, delay, &t);
            NS_TEST_ASSERT_MSG_EQ(done, RingAllReduceTime(n, bytes, rate, delay), "completion");
            const uint64_t chunkPackets = WireSizes((bytes + n - 1) / n).size();
            NS_TEST_ASSERT_MSG_EQ(t->GetPacketsSent(), 2 * (n - 1) * n * chunkPackets,
                                  "packets of all steps");
            NS_TEST_ASSERT_MSG_EQ(t->GetFlowsCompleted(), 2 * (n - 1) * n, "flows");

            // When the payload divides the chunk, the largest packet is the last one.
            const uint64_t even = uint64_t{n} * 64 * PAYLOAD;
            const std::vector<uint32_t> sizes = WireSizes(even / n);
            const Time step =
                SumTxTime(rate, sizes) + rate.CalculateBytesTxTime(sizes.back()) + delay + delay;
            NS_TEST_ASSERT_MSG_EQ(RunRingAllReduce(n, even, rate, delay),
                                  step * static_cast<int64_t>(2 * (n - 1)),
                                  "sum TxTime + TxTime(last) + 2d per step");
            // A chunk smaller than one packet: a single packet per step.
            NS_TEST_ASSERT_MSG_EQ(RunRingAllReduce(n, 1000, rate, delay),
                                  RingAllReduceTime(n, 1000, rate, delay), "small all-reduce");
            NS_TEST_ASSERT_MSG_EQ(RunRingAllReduce(n, 0, rate, delay),
                                  RingAllReduceTime(n, 0, rate, delay), "empty all-reduce");
        }
    }
};

class RingAllReduceBandwidthTestCase : public TestCase
{
public:
    RingAllReduceBandwidthTestCase()
        : TestCase("halving link bandwidth doubles the serialization part of a ring all-reduce")
    {
    }

private:
    void DoRun() override
    {
        const uint32_t n = 4;
        const uint64_t bytes = 3 << 20;
        const Time delay = MicroSeconds(1);
        const DataRate full("400Gbps");
        const DataRate half("200Gbps");
        const Time tFull = RunRingAllReduce(n, bytes, full, delay);
        const Time tHalf = RunRingAllReduce(n, bytes, half, delay);
        NS_TEST_ASSERT_MSG_EQ(tFull, RingAllReduceTime(n, bytes, full, delay), "full rate");
        NS_TEST_ASSERT_MSG_EQ(tHalf, RingAllReduceTime(n, bytes, half, delay), "half rate");

        // Latency is untouched; the rest doubles up to one rounding step per packet time.
        const auto steps = static_cast<int64_t>(2 * (n - 1));
        const Time latency = (delay + delay) * steps;
        const auto packetTimes =
            static_cast<int64_t>(WireSizes((bytes + n - 1) / n).size() + 1) * steps;
        const Time diff = (tHalf - latency) - (tFull - latency) * 2;
        NS_TEST_ASSERT_MSG_EQ((Abs(diff) <= TimeStep(2 * packetTimes)), true,
                              "serialization doubles: " << diff);
    }
};

class RingAllReduceNoQueueingTestCase : public TestCase
{
public:
    RingAllReduceNoQueueingTestCase()
        : TestCase("ring all-reduce over a 4-GPU star has one flow per link direction and no "
                   "queueing between flows")
    {
    }

private:
    void DoRun() override
    {
        const uint32_t n = 4;
        const DataRate rate("400Gbps");
        // Chunks of exactly 64 packets: nothing ever waits.  Chunks with a short last packet:
        // that packet alone waits at the switch, behind the full one of its own flow, for
        // the difference of their TxTimes; no packet ever waits behind another flow's.
        for (uint64_t bytes : {uint64_t{n} * 64 * PAYLOAD, uint64_t{(1 << 20) + 7}})
        {
            Ptr<PacketTransport> t;
            RunRingAllReduce(n, bytes, rate, NanoSeconds(300), &t);
            const std::vector<uint32_t> sizes = WireSizes((bytes + n - 1) / n);
            const Time catchUp =
                rate.CalculateBytesTxTime(MTU) - rate.CalculateBytesTxTime(sizes.back());
            const Ptr<ClusterTopology> topo = t->GetTopology();
            for (uint32_t l = 0; l < topo->GetNLinks(); ++l)
            {
                for (bool atB : {false, true})
                {
                    Ptr<PhantoraNetDevice> dev = t->GetDevice(l, atB);
                    const bool fromGpu =
                        topo->GetNode(atB ? topo->GetLink(l).b : topo->GetLink(l).a).kind ==
                        ClusterTopology::NodeKind::Gpu;
                    NS_TEST_ASSERT_MSG_EQ(dev->GetMaxQueueingDelay(), (fromGpu ? Time(0) : catchUp),
                                          "waiting on " << dev->GetName());
                    // A packet arriving the instant its port frees may be queued for
                    // zero time, so a backlog of one is allowed.
                    NS_TEST_ASSERT_MSG_EQ((dev->GetMaxQueueLength() <= 1), true,
                                          "backlog on " << dev->GetName());
                    // one flow per direction per step
                    NS_TEST_ASSERT_MSG_EQ(dev->GetTxPackets(), 2 * (n - 1) * sizes.size(),
                                          "packets on " << dev->GetName());
                }
            }
        }
    }
};

class EcmpTestCase : public TestCase
{
public:
    EcmpTestCase() : TestCase("a GPU with two equal-cost paths keeps each flow on one of them") {}

private:
    void DoRun() override
    {
        // gpu0 and gpu1 both attach to two switches: two disjoint two-hop paths.
        Ptr<ClusterTopology> topo = Create<ClusterTopology>();
        const uint32_t g0 = topo->AddGpu("gpu0");
        const uint32_t g1 = topo->AddGpu("gpu1");
        const uint32_t s0 = topo->AddSwitch("plane0");
        const uint32_t s1 = topo->AddSwitch("plane1");
        const DataRate rate("100Gbps");
        const Time delay = NanoSeconds(100);
        const uint32_t l00 = topo->AddLink(g0, s0, rate, delay, "nvlink");
        const uint32_t l01 = topo->AddLink(g0, s1, rate, delay, "nvlink");
        topo->AddLink(g1, s0, rate, delay, "nvlink");
        topo->AddLink(g1, s1, rate, delay, "nvlink");
        Ptr<PacketTransport> t = InstallDefault(topo);

        const uint32_t flows = 16;
        const uint64_t bytes = 10 * PAYLOAD;
        uint32_t calls = 0;
        for (uint32_t f = 0; f < flows; ++f)
        {
            t->Send(0, 1, bytes, [&calls]() { ++calls; });
        }
        Simulator::Run();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(calls, flows, "every flow delivered once");
        const uint64_t p0 = t->GetDevice(l00, false)->GetTxPackets();
        const uint64_t p1 = t->GetDevice(l01, false)->GetTxPackets();
        NS_TEST_ASSERT_MSG_EQ(p0 + p1, flows * 10, "all packets left gpu0");
        NS_TEST_ASSERT_MSG_EQ(p0 % 10, 0U, "whole flows per path");
        NS_TEST_ASSERT_MSG_EQ((p0 > 0 && p1 > 0), true, "both paths used");
    }
};

class SwitchCombineTestCase : public TestCase
{
public:
    SwitchCombineTestCase()
        : TestCase("NVLS: the switch reduces n sources into one copy and multicasts one source "
                   "to n, each in the time of one flow through the switch")
    {
    }

private:
    void DoRun() override
    {
        const DataRate rate("100Gbps");
        const Time delay = NanoSeconds(500);
        for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{(1 << 20) + 1234}, uint64_t{0}})
        {
            const uint64_t packets = WireSizes(bytes).size();
            // reduce: 4 -> 1 (the destination among the sources, as NCCL's heads are)
            {
                Ptr<PacketTransport> t =
                    InstallDefault(PhantoraTopologyHelper::SingleSwitch(4, rate, delay, "nvlink"));
                uint32_t calls = 0;
                Time done;
                t->SendThroughSwitch({0, 1, 2, 3}, {2}, bytes,
                                     [&]()
                                     {
                                         ++calls;
                                         done = Simulator::Now();
                                     });
                Simulator::Run();
                NS_TEST_ASSERT_MSG_EQ(calls, 1U, "delivered exactly once");
                NS_TEST_ASSERT_MSG_EQ(done, TwoHopTime(rate, delay, bytes),
                                      "a reduce of 4 costs one flow's time");
                NS_TEST_ASSERT_MSG_EQ(t->GetPacketTransmissions(), 5 * packets,
                                      "4 links up, one copy down");
                NS_TEST_ASSERT_MSG_EQ(t->GetFlowsStarted(), t->GetFlowsCompleted(), "one op");
                Simulator::Destroy();
            }
            // multicast: 1 -> 4
            {
                Ptr<PacketTransport> t =
                    InstallDefault(PhantoraTopologyHelper::SingleSwitch(4, rate, delay, "nvlink"));
                Time done;
                t->SendThroughSwitch({1}, {0, 1, 2, 3}, bytes, [&]() { done = Simulator::Now(); });
                Simulator::Run();
                NS_TEST_ASSERT_MSG_EQ(done, TwoHopTime(rate, delay, bytes),
                                      "a multicast to 4 costs one flow's time");
                NS_TEST_ASSERT_MSG_EQ(t->GetPacketTransmissions(), 5 * packets,
                                      "one copy up, 4 down");
                NS_TEST_ASSERT_MSG_EQ(t->GetBytesDelivered(), 4 * bytes, "every GPU gets it");
                Simulator::Destroy();
            }
        }
        // A single-node NVLS all-reduce plan runs on the packet transport, and agrees with
        // the flow-level transport within the packets' store-and-forward.
        nccl::Config c;
        c.nvlsEnable = true;
        c.nvlsChannels = 4;
        c.maxChunksPerChannel = 4;
        const nccl::Choice choice{nccl::Algorithm::Nvls, nccl::Protocol::Simple, 4};
        const nccl::Plan plan =
            nccl::MakePlan(nccl::CollectiveKind::AllReduce, {8, 8}, 16 << 20, c, choice);
        Ptr<PacketTransport> t =
            InstallDefault(PhantoraTopologyHelper::SingleSwitch(8, rate, delay, "nvlink"));
        std::vector<uint32_t> ranks(8);
        std::iota(ranks.begin(), ranks.end(), 0);
        Time done = Seconds(-1);
        NcclPlanExecutor::Start(t, plan, ranks, [&done]() { done = Simulator::Now(); });
        Simulator::Run();
        Simulator::Destroy();
        // Each GPU's link carries 9/8 of 16 MiB each way: at least that long.
        const Time floor = rate.CalculateBytesTxTime((16ULL << 20) / 8 * 9);
        NS_TEST_ASSERT_MSG_GT(done, floor, "NVLS plan completes, bounded by the links");
        NS_TEST_ASSERT_MSG_LT(done, floor * 1.2, "and close to their rate");
    }
};

class ErrorsTestCase : public TestCase
{
public:
    ErrorsTestCase() : TestCase("disconnected topologies and bad parameters fail with clear errors")
    {
    }

private:
    void DoRun() override
    {
        Ptr<ClusterTopology> topo = Create<ClusterTopology>();
        const uint32_t g0 = topo->AddGpu("gpu0");
        topo->AddGpu("gpu1");
        const uint32_t sw = topo->AddSwitch("switch");
        topo->AddLink(g0, sw, DataRate("100Gbps"), NanoSeconds(100), "nvlink");
        bool threw = false;
        try
        {
            InstallDefault(topo);
        }
        catch (const std::runtime_error& e)
        {
            threw = std::string(e.what()).find("gpu1") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "Install names the unreachable GPU");

        Ptr<ClusterTopology> ok =
            PhantoraTopologyHelper::DirectPair(DataRate("100Gbps"), NanoSeconds(100));
        threw = false;
        try
        {
            PacketTransportHelper helper;
            helper.SetTransportAttribute("Mtu", UintegerValue(64));
            helper.SetTransportAttribute("HeaderBytes", UintegerValue(64));
            helper.Install(ok);
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "an MTU with no room for payload is rejected");

        Ptr<PacketTransport> t = InstallDefault(ok);
        threw = false;
        try
        {
            t->Send(0, 2, 100, []() {});
        }
        catch (const std::out_of_range&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "a send to a GPU that does not exist is rejected");
        Simulator::Destroy();
    }
};

class PacketTransportTestSuite : public TestSuite
{
public:
    PacketTransportTestSuite() : TestSuite("phantora-packet-transport", UNIT)
    {
        AddTestCase(new PhantoraHeaderTestCase, TestCase::QUICK);
        AddTestCase(new DirectLinkTestCase, TestCase::QUICK);
        AddTestCase(new TwoHopTestCase, TestCase::QUICK);
        AddTestCase(new SharedEgressTestCase, TestCase::QUICK);
        AddTestCase(new RingAllReduceTestCase, TestCase::QUICK);
        AddTestCase(new RingAllReduceBandwidthTestCase, TestCase::QUICK);
        AddTestCase(new RingAllReduceNoQueueingTestCase, TestCase::QUICK);
        AddTestCase(new EcmpTestCase, TestCase::QUICK);
        AddTestCase(new SwitchCombineTestCase, TestCase::QUICK);
        AddTestCase(new ErrorsTestCase, TestCase::QUICK);
    }
};

static PacketTransportTestSuite g_packetTransportTestSuite;
