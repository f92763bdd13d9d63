// Question: at 16 nodes of 8 GPUs, when does NCCL's tree all-reduce beat its ring, and
// by how much?  The ring crosses 128 ranks in 2 x 127 steps, so its latency grows with
// the rank count; the double binary tree crosses log2(16) node levels instead (a ring
// inside each node), but its inter-node links carry the data twice.  Small messages
// should favour the tree, large ones the ring.
//
//   ./build/examples/scenario-scripts/phantora-script-ring-vs-tree --nodes=16
#include "compare_common.h"
#include "nccl/tuning.h"

#include <cstdio>

using namespace ns3;
namespace nccl = phantora::nccl;

// RoCEv2 per packet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble/IFG
// 20, as the cluster-*-roce scenarios' header_bytes.
constexpr uint32_t kRoceHeaderBytes = 82;

int main(int argc, char** argv)
{
    uint32_t nodes = 16;
    std::string transport = "flow";
    std::string fabric = "ib";
    CommandLine cmd(__FILE__);
    cmd.AddValue("nodes", "servers of 8 GPUs (one 400 Gb/s NIC per GPU, rail-optimised)", nodes);
    cmd.AddValue("transport", "flow or packet", transport);
    cmd.AddValue("fabric", "ib or roce", fabric);
    cmd.Parse(argc, argv);
    Time::SetResolution(Time::PS);

    // As scenarios/cluster-16x8-h100-ib.toml: NVSwitch servers, one leaf per rail, 8 spines.
    NodeSpec node;
    node.intraRate = DataRate("3825Gbps"); // 18 NVLink4 links x 26.5625 GB/s
    node.pcieRate = DataRate("512Gbps");
    FabricSpec net;
    net.kind = fabric;
    net.nicRate = DataRate("400Gbps");
    net.nicDelay = NanoSeconds(600);
    net.spineDelay = NanoSeconds(600);
    net.spines = 8;

    nccl::CommShape shape;
    shape.nRanks = nodes * node.gpus;
    shape.ranksPerNode = node.gpus;
    const nccl::Config defaults; // NCCL's own orders of magnitude
    std::printf("NCCL all-reduce over %u nodes x %u GPUs (%s, %s-level)\n", nodes, node.gpus,
                fabric.c_str(), transport.c_str());
    std::printf("%12s %18s %18s %9s  %s\n", "size(B)", "ring(us)", "tree(us)", "tree/ring",
                "NCCL's pick");
    for (uint64_t bytes :
         {uint64_t{64} << 10, uint64_t{1} << 20, uint64_t{16} << 20, uint64_t{256} << 20})
    {
        double us[2] = {0, 0};
        std::string proto[2];
        for (int i = 0; i < 2; ++i)
        {
            nccl::Config config = defaults;
            config.algorithm = i == 0 ? "ring" : "tree";
            auto topo = PhantoraTopologyHelper::MultiNode(nodes, node, net);
            const Time t = phantora::scripts::PlanTime(
                topo,
                [&]
                {
                    nccl::Plan plan =
                        nccl::MakePlan(nccl::CollectiveKind::AllReduce, shape, bytes, config);
                    proto[i] = plan.protocol;
                    return plan;
                },
                transport, fabric == "roce" ? kRoceHeaderBytes : phantora::scripts::kIbHeaderBytes);
            us[i] = t.GetSeconds() * 1e6;
        }
        const nccl::Choice pick =
            nccl::Choose(nccl::CollectiveKind::AllReduce, shape, bytes, defaults);
        std::printf("%12llu %10.1f %-7s %10.1f %-7s %9.2f  %s/%s\n",
                    static_cast<unsigned long long>(bytes), us[0], proto[0].c_str(), us[1],
                    proto[1].c_str(), us[1] / us[0], nccl::AlgorithmName(pick.algorithm),
                    nccl::ProtocolName(pick.protocol));
    }
    return 0;
}
