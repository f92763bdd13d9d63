// Question: how much does a 1 GiB all-reduce across nodes gain from 400 Gb/s NICs
// over 200 Gb/s ones?  NCCL's own plan (algorithm, protocol, channels on the rails), as
// phantora-nccl-tests and live runs simulate it; --algorithm=naive-ring for one plain ring.
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
    std::string algorithm = "auto";
    std::string rates = "200Gbps,400Gbps";
    uint32_t spines = 0;
    CommandLine cmd(__FILE__);
    cmd.AddValue("nodes", "servers of 8 H100s (as scenarios/cluster-*-h100-ib.toml)", nodes);
    cmd.AddValue("bytes", "all-reduce size", bytes);
    cmd.AddValue("transport", "flow or packet", transport);
    cmd.AddValue("algorithm", "auto (NCCL's choice), ring, tree, or naive-ring", algorithm);
    cmd.AddValue("rates", "NIC speeds to compare, comma-separated", rates);
    cmd.AddValue("spines", "spine switches (0: one per rail)", spines);
    cmd.Parse(argc, argv);
    if (!phantora::scripts::IsKnownAlgorithm(algorithm))
    {
        std::fprintf(stderr, "--algorithm: expected auto, ring, tree or naive-ring, got %s\n",
                     algorithm.c_str());
        return 2;
    }
    Time::SetResolution(Time::PS);

    const NodeSpec node = phantora::scripts::H100Server();
    std::printf("all-reduce (%s) of %llu B over %u nodes x %u GPUs (%s-level)\n",
                algorithm.c_str(), static_cast<unsigned long long>(bytes), nodes, node.gpus,
                transport.c_str());
    for (std::size_t at = 0; at < rates.size();)
    {
        const std::size_t comma = std::min(rates.find(',', at), rates.size());
        const std::string rate = rates.substr(at, comma - at);
        at = comma + 1;
        FabricSpec fabric = phantora::scripts::InfiniBandFabric();
        fabric.nicRate = DataRate(rate);
        fabric.spines = spines;
        auto topo = PhantoraTopologyHelper::MultiNode(nodes, node, fabric);
        const auto r =
            phantora::scripts::AllReduce(topo, node.gpus, bytes, transport, algorithm);
        std::printf("  NICs %-8s %11.4f ms  busbw %7.2f GB/s  (%s)\n",
                    rate.c_str(), r.time.GetSeconds() * 1e3,
                    phantora::scripts::AllReduceBusBw(bytes, topo->GetNGpus(), r.time),
                    phantora::scripts::Describe(r).c_str());
    }
    return 0;
}
