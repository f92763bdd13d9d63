// Question: how much does a 1 GiB all-reduce across nodes gain from 400 Gb/s NICs
// over 200 Gb/s ones?
//
//   ./build/examples/scenario-scripts/phantora-script-nic-speed --nodes=4 --bytes=1073741824
#include "compare_common.h"

#include <cstdio>

using namespace ns3;

int main(int argc, char** argv)
{
    uint32_t nodes = 4;
    uint64_t bytes = uint64_t{1} << 30;
    std::string transport = "flow";
    CommandLine cmd(__FILE__);
    cmd.AddValue("nodes", "servers of 8 GPUs", nodes);
    cmd.AddValue("bytes", "all-reduce size", bytes);
    cmd.AddValue("transport", "flow or packet", transport);
    cmd.Parse(argc, argv);
    Time::SetResolution(Time::PS);

    std::printf("ring all-reduce of %llu B over %u nodes x 8 GPUs (%s-level)\n",
                static_cast<unsigned long long>(bytes), nodes, transport.c_str());
    for (const char* rate : {"200Gbps", "400Gbps"})
    {
        FabricSpec fabric;
        fabric.nicRate = DataRate(rate);
        auto topo = PhantoraTopologyHelper::MultiNode(nodes, NodeSpec{}, fabric);
        const Time t = phantora::scripts::RingAllReduceTime(topo, bytes, transport);
        std::printf("  NICs %-8s %10.3f ms  busbw %7.2f GB/s\n", rate, t.GetSeconds() * 1e3,
                    phantora::scripts::AllReduceBusBw(bytes, topo->GetNGpus(), t));
    }
    return 0;
}
