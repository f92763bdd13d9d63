#include "phantora-topology-helper.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

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

Ptr<ClusterTopology> PhantoraTopologyHelper::MultiNode(uint32_t nodes, const NodeSpec& node,
                                                       const FabricSpec& fabric)
{
    auto bad = [](const std::string& what) { throw std::invalid_argument("MultiNode: " + what); };
    if (nodes == 0 || node.gpus == 0)
    {
        bad("nodes and node.gpus must be positive");
    }
    if (node.intra != "nvswitch" && node.intra != "pcie")
    {
        bad("node.intra must be \"nvswitch\" or \"pcie\", not \"" + node.intra + "\"");
    }
    if (node.gpusPerNic == 0 || node.gpus % node.gpusPerNic != 0)
    {
        bad("node.gpusPerNic must divide node.gpus");
    }
    const uint32_t nicsPerNode = node.gpus / node.gpusPerNic;
    const uint32_t unit = fabric.nodesPerUnit == 0 ? nodes : fabric.nodesPerUnit;
    if (nodes > 1 && nodes % unit != 0)
    {
        bad("fabric.nodesPerUnit must divide the node count");
    }
    if (!(fabric.oversubscription >= 1.0))
    {
        bad("fabric.oversubscription must be >= 1 (1 = non-blocking)");
    }

    Ptr<ClusterTopology> topo = Create<ClusterTopology>();
    for (uint32_t n = 0; n < nodes; ++n)
    {
        for (uint32_t g = 0; g < node.gpus; ++g)
        {
            topo->AddGpu("n" + std::to_string(n) + ".gpu" + std::to_string(g));
        }
    }
    // nics[n][k]: the forwarding node of NIC k of node n
    std::vector<std::vector<uint32_t>> nics(nodes);
    for (uint32_t n = 0; n < nodes; ++n)
    {
        const std::string prefix = "n" + std::to_string(n) + ".";
        const uint32_t first = n * node.gpus;
        if (node.intra == "nvswitch")
        {
            const uint32_t nvswitch = topo->AddSwitch(prefix + "nvswitch");
            for (uint32_t g = 0; g < node.gpus; ++g)
            {
                topo->AddLink(topo->GetGpuNode(first + g), nvswitch, node.intraRate,
                              node.intraDelay, "nvlink");
            }
        }
        if (nodes == 1 && node.intra == "nvswitch")
        {
            continue; // one NVLink server: NICs would carry nothing
        }
        const uint32_t pcie = node.intra == "pcie" ? topo->AddSwitch(prefix + "pcie") : UINT32_MAX;
        if (pcie != UINT32_MAX)
        {
            for (uint32_t g = 0; g < node.gpus; ++g)
            {
                topo->AddLink(topo->GetGpuNode(first + g), pcie, node.intraRate, node.intraDelay,
                              "pcie");
            }
        }
        if (nodes == 1)
        {
            continue;
        }
        for (uint32_t k = 0; k < nicsPerNode; ++k)
        {
            const uint32_t nic =
                topo->AddSwitch(prefix + "nic" + std::to_string(k), ClusterTopology::NodeKind::Nic);
            nics[n].push_back(nic);
            if (pcie != UINT32_MAX)
            {
                topo->AddLink(pcie, nic, node.pcieRate, node.pcieDelay, "pcie");
            }
            else
            {
                for (uint32_t j = 0; j < node.gpusPerNic; ++j)
                {
                    topo->AddLink(topo->GetGpuNode(first + k * node.gpusPerNic + j), nic,
                                  node.pcieRate, node.pcieDelay, "pcie");
                }
            }
        }
    }
    if (nodes == 1)
    {
        return topo;
    }

    const uint32_t units = nodes / unit;
    const uint32_t spines = fabric.spines == 0 ? nicsPerNode : fabric.spines;
    const bool needSpines = units > 1 || nicsPerNode > 1;
    std::vector<uint32_t> spineNodes;
    if (needSpines)
    {
        for (uint32_t s = 0; s < spines; ++s)
        {
            spineNodes.push_back(topo->AddSwitch("spine" + std::to_string(s)));
        }
    }
    // Each leaf's uplinks carry its downlink capacity divided by the oversubscription.
    const double uplinkBps =
        static_cast<double>(fabric.nicRate.GetBitRate()) * unit / fabric.oversubscription / spines;
    const DataRate uplink(static_cast<uint64_t>(std::llround(uplinkBps)));
    for (uint32_t u = 0; u < units; ++u)
    {
        for (uint32_t k = 0; k < nicsPerNode; ++k)
        {
            const uint32_t leaf =
                topo->AddSwitch("u" + std::to_string(u) + ".leaf" + std::to_string(k));
            for (uint32_t n = u * unit; n < (u + 1) * unit; ++n)
            {
                topo->AddLink(nics[n][k], leaf, fabric.nicRate, fabric.nicDelay, fabric.kind);
            }
            for (uint32_t spine : spineNodes)
            {
                topo->AddLink(leaf, spine, uplink, fabric.spineDelay, fabric.kind);
            }
        }
    }
    topo->CheckConnected();
    return topo;
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
