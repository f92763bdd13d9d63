#include "phantora-topology-helper.h"

#include <stdexcept>
#include <string>

namespace ns3
{

Ptr<ClusterTopology> PhantoraTopologyHelper::SingleSwitch(uint32_t nGpus, DataRate rate, Time delay,
                                                          const std::string& kind)
{
    if (nGpus == 0)
    {
        throw std::invalid_argument("SingleSwitch: a cluster needs at least one GPU");
    }
    Ptr<ClusterTopology> topology = Create<ClusterTopology>();
    for (uint32_t i = 0; i < nGpus; ++i)
    {
        topology->AddGpu("gpu" + std::to_string(i));
    }
    const uint32_t sw = topology->AddSwitch("switch");
    for (uint32_t i = 0; i < nGpus; ++i)
    {
        topology->AddLink(topology->GetGpuNode(i), sw, rate, delay, kind);
    }
    return topology;
}

Ptr<ClusterTopology> PhantoraTopologyHelper::DirectPair(DataRate rate, Time delay,
                                                        const std::string& kind)
{
    Ptr<ClusterTopology> topology = Create<ClusterTopology>();
    const uint32_t a = topology->AddGpu("gpu0");
    const uint32_t b = topology->AddGpu("gpu1");
    topology->AddLink(a, b, rate, delay, kind);
    return topology;
}

} // namespace ns3
