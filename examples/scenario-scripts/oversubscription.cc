// Question: what does a 4:1 oversubscribed spine cost a cross-unit all-reduce,
// compared with a non-blocking (1:1) fabric?
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
    CommandLine cmd(__FILE__);
    cmd.AddValue("nodes", "servers of 8 GPUs", nodes);
    cmd.AddValue("nodesPerUnit", "servers per leaf group (traffic between groups crosses spines)",
                 nodesPerUnit);
    cmd.AddValue("bytes", "all-reduce size", bytes);
    cmd.AddValue("transport", "flow or packet", transport);
    cmd.Parse(argc, argv);
    Time::SetResolution(Time::PS);

    std::printf(
        "ring all-reduce of %llu B over %u nodes x 8 GPUs, %u nodes per leaf group (%s-level)\n",
        static_cast<unsigned long long>(bytes), nodes, nodesPerUnit, transport.c_str());
    for (double ratio : {1.0, 4.0})
    {
        FabricSpec fabric;
        fabric.nodesPerUnit = nodesPerUnit;
        fabric.oversubscription = ratio;
        auto topo = PhantoraTopologyHelper::MultiNode(nodes, NodeSpec{}, fabric);
        const Time t = phantora::scripts::RingAllReduceTime(topo, bytes, transport);
        std::printf("  %.0f:1 spine %10.3f ms  busbw %7.2f GB/s\n", ratio, t.GetSeconds() * 1e3,
                    phantora::scripts::AllReduceBusBw(bytes, topo->GetNGpus(), t));
    }
    return 0;
}
