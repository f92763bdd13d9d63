// Question: what does a 4:1 oversubscribed spine cost a cross-unit all-reduce,
// compared with a non-blocking (1:1) fabric?  NCCL's own plan, as phantora-nccl-tests and
// live runs simulate it; --algorithm=naive-ring for one plain ring.
//
//   ./build/examples/scenario-scripts/phantora-script-oversubscription --nodes=8 --nodesPerUnit=2
#include "compare_common.h"

#include <cstdio>

using namespace ns3;

int main(int argc, char** argv)
{
    uint32_t nodes = 8;
    uint32_t nodesPerUnit = 2;
    uint64_t bytes = uint64_t{1} << 30;
    std::string transport = "flow";
    std::string algorithm = "auto";
    CommandLine cmd(__FILE__);
    cmd.AddValue("nodes", "servers of 8 GPUs", nodes);
    cmd.AddValue("nodesPerUnit", "servers per leaf group (traffic between groups crosses spines)",
                 nodesPerUnit);
    cmd.AddValue("bytes", "all-reduce size", bytes);
    cmd.AddValue("transport", "flow or packet", transport);
    cmd.AddValue("algorithm", "auto (NCCL's choice), ring, tree, or naive-ring", algorithm);
    cmd.Parse(argc, argv);
    if (!phantora::scripts::IsKnownAlgorithm(algorithm))
    {
        std::fprintf(stderr, "--algorithm: expected auto, ring, tree or naive-ring, got %s\n",
                     algorithm.c_str());
        return 2;
    }
    Time::SetResolution(Time::PS);

    const NodeSpec node = phantora::scripts::H100Server();
    std::printf(
        "all-reduce (%s) of %llu B over %u nodes x %u GPUs, %u nodes per leaf group (%s-level)\n",
        algorithm.c_str(), static_cast<unsigned long long>(bytes), nodes, node.gpus, nodesPerUnit,
        transport.c_str());
    for (double ratio : {1.0, 4.0})
    {
        FabricSpec fabric = phantora::scripts::InfiniBandFabric();
        fabric.nodesPerUnit = nodesPerUnit;
        fabric.oversubscription = ratio;
        auto topo = PhantoraTopologyHelper::MultiNode(nodes, node, fabric);
        const auto r =
            phantora::scripts::AllReduce(topo, node.gpus, bytes, transport, algorithm);
        std::printf("  %.0f:1 spine %11.4f ms  busbw %7.2f GB/s  (%s)\n", ratio,
                    r.time.GetSeconds() * 1e3,
                    phantora::scripts::AllReduceBusBw(bytes, topo->GetNGpus(), r.time),
                    phantora::scripts::Describe(r).c_str());
    }
    return 0;
}
