// Ring all-reduce on the packet-level transport: prints the simulated completion time,
// on a single-switch star also the closed-form expectation, the link-layer statistics and
// the simulator's speed.
//
//   phantora-packet-transfer-example --bytes=268435456 --gpus=16 --rate=400Gbps --delay=1us
//   phantora-packet-transfer-example --bytes=268435456 --gpus=16 --nodes=2 --fabric=roce
//
// With --nodes > 1 the GPUs are spread over that many 8-GPU-class NVLink servers
// (PhantoraTopologyHelper::MultiNode defaults: NVSwitch, one 400 Gb/s NIC per GPU,
// rail-optimised leaf/spine of --fabric links), and the ring visits them the way NCCL
// builds rings on such a fabric: leaving and entering every server on the same rail.

#include "nccl/plan.h"
#include "ns3/command-line.h"
#include "ns3/data-rate.h"
#include "ns3/log.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/object-factory.h"
#include "ns3/packet-transport-helper.h"
#include "ns3/packet-transport.h"
#include "ns3/phantora-topology-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

using namespace ns3;
namespace nccl = phantora::nccl;

NS_LOG_COMPONENT_DEFINE("PhantoraPacketTransferExample");

namespace
{

/// The documented formula (see packet-transport.h), for comparison with the simulation.
Time ExpectedRingAllReduce(uint32_t n, uint64_t bytes, DataRate rate, Time delay, uint32_t mtu,
                           uint32_t header)
{
    const uint64_t chunk = (bytes + n - 1) / n;
    const uint64_t payload = mtu - header;
    const uint64_t k = chunk == 0 ? 1 : (chunk + payload - 1) / payload;
    const uint64_t lastPayload = chunk == 0 ? 0 : chunk - (k - 1) * payload;
    const Time full = rate.CalculateBytesTxTime(mtu);
    const Time last = rate.CalculateBytesTxTime(static_cast<uint32_t>(lastPayload + header));
    // The second link adds the largest packet's time: a short last packet waits behind
    // the full one ahead of it at the switch.
    const Time largest = k > 1 ? full : last;
    const Time step = full * static_cast<int64_t>(k - 1) + last + largest + delay + delay;
    return step * static_cast<int64_t>(2 * (n - 1));
}

/// ns-3's CommandLine takes only --name=value; also accept the common "--name value".
std::vector<std::string> JoinOptionValues(int argc, char* argv[])
{
    std::vector<std::string> args{argv[0]};
    for (int i = 1; i < argc; ++i)
    {
        std::string arg = argv[i];
        if (arg.rfind("--", 0) == 0 && arg.find('=') == std::string::npos && i + 1 < argc &&
            std::string(argv[i + 1]).rfind("--", 0) != 0)
        {
            arg += std::string("=") + argv[++i];
        }
        args.push_back(arg);
    }
    return args;
}

} // namespace

int main(int argc, char* argv[])
{
    // Before any Time exists: GPU links serialize a packet in tens of nanoseconds, so
    // nanosecond rounding per packet would add up to visible error.
    Time::SetResolution(Time::PS);

    uint64_t bytes = 64 << 20;
    uint32_t gpus = 8;
    DataRate rate("400Gbps");
    Time delay = MicroSeconds(1);
    uint32_t mtu = 4096;
    uint32_t header = 48;
    std::string scheduler = "ns3::MapScheduler";
    uint32_t nodes = 1;
    std::string fabric = "ib";

    CommandLine cmd(__FILE__);
    cmd.AddValue("bytes", "All-reduce buffer size in bytes", bytes);
    cmd.AddValue("gpus", "Number of GPUs on the switch", gpus);
    cmd.AddValue("rate", "Rate of each GPU-switch link, per direction", rate);
    cmd.AddValue("delay", "Propagation delay of each link", delay);
    cmd.AddValue("mtu", "Packet size on the wire, header included", mtu);
    cmd.AddValue("header", "Per-packet header bytes", header);
    cmd.AddValue("nodes", "Servers the GPUs are spread over (1: one switch)", nodes);
    cmd.AddValue("fabric", "Link kind between servers: ib or roce", fabric);
    cmd.AddValue("scheduler",
                 "ns-3 event scheduler (MapScheduler, ns-3's default, was fastest here)",
                 scheduler);
    std::vector<std::string> args = JoinOptionValues(argc, argv);
    std::vector<char*> argp;
    for (std::string& a : args)
    {
        argp.push_back(a.data());
    }
    cmd.Parse(static_cast<int>(argp.size()), argp.data());

    ObjectFactory schedulerFactory;
    schedulerFactory.SetTypeId(scheduler);
    Simulator::SetScheduler(schedulerFactory);

    PacketTransportHelper helper;
    helper.SetTransportAttribute("Mtu", UintegerValue(mtu));
    helper.SetTransportAttribute("HeaderBytes", UintegerValue(header));
    std::vector<uint32_t> ranks(gpus);
    std::iota(ranks.begin(), ranks.end(), 0);
    Ptr<PacketTransport> transport;
    if (nodes <= 1)
    {
        transport =
            helper.Install(PhantoraTopologyHelper::SingleSwitch(gpus, rate, delay, "nvlink"));
    }
    else
    {
        if (gpus % nodes != 0)
        {
            std::cerr << "--gpus (" << gpus << ") must be a multiple of --nodes (" << nodes
                      << ")\n";
            return 2;
        }
        NodeSpec node;
        node.gpus = gpus / nodes;
        FabricSpec fabricSpec;
        fabricSpec.kind = fabric;
        transport = helper.Install(PhantoraTopologyHelper::MultiNode(nodes, node, fabricSpec));
        // Odd servers are visited backwards, so each inter-server hop stays on one rail.
        for (uint32_t n = 1; n < nodes; n += 2)
        {
            std::reverse(ranks.begin() + n * node.gpus, ranks.begin() + (n + 1) * node.gpus);
        }
    }
    Time done = Seconds(-1);
    NcclPlanExecutor::Start(transport, nccl::MakeRingAllReducePlan(gpus, bytes), ranks,
                            [&done]() { done = Simulator::Now(); });

    const auto wallStart = std::chrono::steady_clock::now();
    Simulator::Run();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    const uint64_t events = Simulator::GetEventCount();

    const PacketTransport::Statistics st = transport->GetStatistics();
    std::cout << "ring all-reduce of " << bytes << " B over " << gpus << " GPUs";
    if (nodes <= 1)
    {
        std::cout << ", " << rate << " links, " << delay.As(Time::NS) << " delay";
    }
    else
    {
        std::cout << " on " << nodes << " servers, " << fabric << " fabric";
    }
    std::cout << ", MTU " << mtu << " B, header " << header << " B\n"
              << "simulated completion: " << done.As(Time::US) << " (" << done.GetPicoSeconds()
              << " ps)\n";
    bool ok = done.IsPositive();
    if (nodes <= 1)
    {
        const Time expected = ExpectedRingAllReduce(gpus, bytes, rate, delay, mtu, header);
        std::cout << "expected (formula):   " << expected.As(Time::US) << " ("
                  << expected.GetPicoSeconds() << " ps)"
                  << (done == expected ? ", exact" : ", DIFFERS") << "\n";
        ok = ok && done == expected;
    }
    std::cout << "packets sent: " << transport->GetPacketsSent()
              << ", packet transmissions: " << transport->GetPacketTransmissions() << "\n"
              << "PFC pauses: " << st.pauseFramesSent << ", ECN marks: " << st.ecnMarks
              << ", CNPs: " << st.cnpsSent << ", credit stalls: " << st.creditStalls
              << ", drops: " << st.drops << ", deepest queue: " << st.maxQueueBytes << " B\n"
              << "events: " << events << ", wall time: " << wall << " s, "
              << static_cast<double>(events) / wall << " events/s" << std::endl;

    Simulator::Destroy();
    return ok ? 0 : 1;
}
