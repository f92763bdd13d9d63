// A flat ring all-reduce over a rail-optimised GPU cluster on the flow-level transport,
// timed: how long the simulator itself takes for ~2 million flows.
//
// Per node: 8 GPUs on an NVSwitch (NVLink, 450 GB/s each) and one NIC per GPU (PCIe 5 x16,
// 64 GB/s).  NIC i of every node plugs into rail leaf i (400 Gb/s); every leaf has one link
// to every spine, sized so that the leaf's uplinks carry as much as its NICs (1:1).  The ring
// runs node-major, GPU-minor, so 7 of every 8 hops stay on NVLink and the 8th crosses
// leaf, spine and leaf.
#include "nccl/plan.h"
#include "ns3/cluster-topology.h"
#include "ns3/command-line.h"
#include "ns3/flow-transport-helper.h"
#include "ns3/flow-transport.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

using namespace ns3;
namespace nccl = phantora::nccl;

int main(int argc, char** argv)
{
    uint32_t nodes = 128;
    uint32_t gpusPerNode = 8;
    uint32_t spines = 8;
    uint64_t bytes = uint64_t{1} << 30;
    double spineOverprovision = 1.0;
    CommandLine cmd(__FILE__);
    cmd.AddValue("nodes", "Number of nodes", nodes);
    cmd.AddValue("gpusPerNode", "GPUs (and NICs, and rails) per node", gpusPerNode);
    cmd.AddValue("spines", "Number of spine switches", spines);
    cmd.AddValue("bytes", "All-reduce buffer size in bytes", bytes);
    cmd.AddValue("spineOverprovision",
                 "Leaf uplink capacity over leaf downlink capacity (1 = non-blocking 1:1)",
                 spineOverprovision);
    Time checkInterval = Seconds(0);
    cmd.AddValue("checkInterval",
                 "If positive, compare the rates with a from-scratch max-min allocation this often "
                 "(slow: for small runs)",
                 checkInterval);
    std::string scheduler = "ns3::MapScheduler";
    cmd.AddValue("scheduler", "ns-3 event scheduler", scheduler);
    cmd.Parse(argc, argv);
    ObjectFactory schedulerFactory(scheduler);
    Simulator::SetScheduler(schedulerFactory);

    const DataRate nvlink("3600Gbps");
    const DataRate pcie("512Gbps");
    const DataRate nic("400Gbps");
    const DataRate uplink(static_cast<uint64_t>(static_cast<double>(nic.GetBitRate()) * nodes *
                                                spineOverprovision / spines));

    const auto wallStart = std::chrono::steady_clock::now();
    auto topo = Create<ClusterTopology>();
    std::vector<uint32_t> leaves;
    for (uint32_t r = 0; r < gpusPerNode; ++r)
    {
        leaves.push_back(topo->AddSwitch("leaf" + std::to_string(r)));
    }
    for (uint32_t s = 0; s < spines; ++s)
    {
        const uint32_t spine = topo->AddSwitch("spine" + std::to_string(s));
        for (uint32_t leaf : leaves)
        {
            topo->AddLink(leaf, spine, uplink, MicroSeconds(1), "roce");
        }
    }
    for (uint32_t n = 0; n < nodes; ++n)
    {
        const std::string node = "node" + std::to_string(n);
        const uint32_t nvswitch = topo->AddSwitch(node + "/nvswitch");
        for (uint32_t g = 0; g < gpusPerNode; ++g)
        {
            const std::string gpuName = node + "/gpu" + std::to_string(g);
            const uint32_t gpu = topo->AddGpu(gpuName);
            const uint32_t nicNode =
                topo->AddSwitch(node + "/nic" + std::to_string(g), ClusterTopology::NodeKind::Nic);
            topo->AddLink(gpu, nvswitch, nvlink, NanoSeconds(500), "nvlink");
            topo->AddLink(gpu, nicNode, pcie, NanoSeconds(500), "pcie");
            topo->AddLink(nicNode, leaves[g], nic, MicroSeconds(1), "roce");
        }
    }
    // GPU ids are node-major, GPU-minor: exactly the ring order.
    const uint32_t nGpus = topo->GetNGpus();
    std::vector<uint32_t> ring(nGpus);
    for (uint32_t i = 0; i < nGpus; ++i)
    {
        ring[i] = i;
    }
    Ptr<FlowTransport> transport = FlowTransportHelper().Install(topo);
    const auto setupEnd = std::chrono::steady_clock::now();

    // The plan is built once the simulation runs: until then ns-3 books every Time object
    // created (for a change of resolution), which would cost more than the plan itself.
    Time done = Seconds(-1);
    size_t nTransfers = 0;
    Simulator::ScheduleNow(
        [&]()
        {
            nccl::Plan plan = nccl::MakeRingAllReducePlan(nGpus, bytes);
            nTransfers = plan.transfers.size();
            NcclPlanExecutor::Start(transport, std::move(plan), ring,
                                    [&]() { done = Simulator::Now(); });
        });
    double worstRateError = 0;
    uint32_t checks = 0;
    std::function<void()> check = [&]()
    {
        const double err = transport->CheckMaxMinFair();
        if (err >= 0)
        {
            worstRateError = std::max(worstRateError, err);
            ++checks;
        }
        if (done.IsStrictlyNegative())
        {
            Simulator::Schedule(checkInterval, check);
        }
    };
    if (checkInterval.IsStrictlyPositive())
    {
        Simulator::Schedule(checkInterval, check);
    }
    Simulator::Run();
    const auto wallEnd = std::chrono::steady_clock::now();

    const double setupS = std::chrono::duration<double>(setupEnd - wallStart).count();
    const double runS = std::chrono::duration<double>(wallEnd - setupEnd).count();
    const uint64_t events = Simulator::GetEventCount();
    const uint64_t chunk = (bytes + nGpus - 1) / nGpus;
    // Lower bound: every cross-node chunk has to cross one 400 Gb/s NIC link per step.
    const double nicBound = 2.0 * (nGpus - 1) *
                            static_cast<double>(transport->GetWireBytes(chunk)) * 8 /
                            static_cast<double>(nic.GetBitRate());

    std::cout << std::fixed << std::setprecision(3);
    std::cout << "ring all-reduce of " << bytes << " B over " << nGpus << " GPUs (" << nodes
              << " nodes x " << gpusPerNode << "), " << spines << " spines, leaf uplinks "
              << uplink.GetBitRate() / 1e9 << " Gb/s each\n";
    std::cout << "simulated time      " << done.GetSeconds() * 1e3 << " ms (NIC-bound "
              << nicBound * 1e3 << " ms)\n";
    std::cout << "wall time           " << setupS + runS << " s (setup " << setupS << " s, run "
              << runS << " s)\n";
    std::cout << "transfers           " << nTransfers << "\n";
    std::cout << "flows completed     " << transport->GetFlowsCompleted() << "\n";
    std::cout << "rate recomputations " << transport->GetRateRecomputations() << "\n";
    std::cout << "rate changes        " << transport->GetRateChanges() << "\n";
    std::cout << "events              " << events << " (" << std::setprecision(0)
              << static_cast<double>(events) / runS << " events/s)\n";
    if (checks > 0)
    {
        std::cout << std::setprecision(3) << std::scientific << "max-min self-check  " << checks
                  << " checks, worst relative rate error " << worstRateError << "\n";
    }
    Simulator::Destroy();
    return done.IsStrictlyNegative() ? 1 : 0;
}
