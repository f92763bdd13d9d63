#include "topology_from_scenario.h"

#include "ns3/flow-transport-helper.h"
#include "ns3/packet-transport-helper.h"
#include "ns3/phantora-topology-helper.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace phantora
{

namespace
{

ns3::DataRate Rate(double bitsPerSecond)
{
    return ns3::DataRate(static_cast<uint64_t>(std::llround(bitsPerSecond)));
}

ns3::Time Delay(double ns)
{
    return ns3::PicoSeconds(std::llround(ns * 1000.0));
}

std::string Where(const Scenario& sc, int64_t line)
{
    return line > 0 ? fmt::format("{}:{}", sc.file.string(), line) : sc.file.string();
}

ns3::Ptr<ns3::ClusterTopology> BuildSwitch(const TopologySpec& t)
{
    return ns3::PhantoraTopologyHelper::SingleSwitch(t.gpus, Rate(t.linkBitsPerSecond),
                                                     Delay(t.linkLatencyNs), t.linkKind);
}

ns3::NodeSpec Server(const TopologySpec& t)
{
    ns3::NodeSpec node;
    node.gpus = t.gpusPerNode;
    node.intra = t.intra;
    // The helper's intra link is the GPU's link to its node's switch: NVLink to the
    // NVSwitch, or the GPU's own PCIe link to the PCIe switch.
    const bool nvswitch = t.intra == "nvswitch";
    node.intraRate = Rate(nvswitch ? t.nvlinkBitsPerSecond : t.pcieBitsPerSecond);
    node.intraDelay = Delay(nvswitch ? t.nvlinkLatencyNs : t.pcieLatencyNs);
    if (t.pcieBitsPerSecond > 0)
    {
        node.pcieRate = Rate(t.pcieBitsPerSecond);
        node.pcieDelay = Delay(t.pcieLatencyNs);
    }
    node.gpusPerNic = t.gpusPerNic;
    return node;
}

ns3::Ptr<ns3::ClusterTopology> BuildCluster(const TopologySpec& t)
{
    ns3::FabricSpec fabric;
    fabric.kind = t.fabric == "roce" ? "roce" : "ib";
    if (t.nicBitsPerSecond > 0)
    {
        fabric.nicRate = Rate(t.nicBitsPerSecond);
    }
    fabric.nicDelay = Delay(t.leafLatencyNs);
    fabric.nodesPerUnit = t.nodesPerUnit;
    fabric.spines = t.spines;
    fabric.oversubscription = t.oversubscription;
    fabric.spineDelay = Delay(t.spineLatencyNs);
    return ns3::PhantoraTopologyHelper::MultiNode(t.nodes, Server(t), fabric);
}

ns3::Ptr<ns3::ClusterTopology> BuildCustom(const Scenario& sc)
{
    const TopologySpec& t = sc.topology;
    auto topo = ns3::Create<ns3::ClusterTopology>();
    std::map<std::string, uint32_t> ids;
    for (uint32_t g = 0; g < t.gpus; ++g)
    {
        const std::string name = "gpu" + std::to_string(g);
        ids[name] = topo->AddGpu(name);
    }
    for (const auto& name : t.switches)
    {
        ids[name] = topo->AddSwitch(name);
    }
    for (const auto& name : t.nics)
    {
        ids[name] = topo->AddSwitch(name, ns3::ClusterTopology::NodeKind::Nic);
    }
    for (const LinkSpec& l : t.links)
    {
        const auto a = ids.find(l.a);
        const auto b = ids.find(l.b);
        if (a == ids.end() || b == ids.end())
        {
            throw ScenarioError(fmt::format("{}: link between '{}' and '{}': unknown end",
                                            Where(sc, l.line), l.a, l.b));
        }
        topo->AddLink(a->second, b->second, Rate(l.bitsPerSecond), Delay(l.latencyNs), l.kind);
    }
    return topo;
}

/// Every ordered GPU pair must have a route.  Routes never pass through a GPU (the
/// transports forward only in switches and NICs), so a GPU wired only to other GPUs
/// reaches just its direct neighbours.
void CheckReachable(const Scenario& sc, const ns3::ClusterTopology& topo)
{
    std::vector<std::string> missing;
    std::size_t pairs = 0;
    for (uint32_t d = 0; d < topo.GetNGpus(); ++d)
    {
        for (uint32_t s = 0; s < topo.GetNGpus(); ++s)
        {
            if (s == d)
            {
                continue;
            }
            try
            {
                topo.NextHops(topo.GetGpuNode(s), d);
            }
            catch (const std::runtime_error&)
            {
                if (++pairs <= 4)
                {
                    missing.push_back(fmt::format("{} -> {}", topo.GetNode(topo.GetGpuNode(s)).name,
                                                  topo.GetNode(topo.GetGpuNode(d)).name));
                }
            }
        }
    }
    if (pairs > 0)
    {
        std::string list;
        for (const auto& m : missing)
        {
            list += (list.empty() ? "" : ", ") + m;
        }
        throw ScenarioError(fmt::format(
            "{}: 'topology': a GPU with no path to another: {}{}; expected every GPU to reach "
            "every other through switches or NICs (routes do not pass through GPUs)",
            Where(sc, sc.topology.line), list,
            pairs > missing.size() ? fmt::format(" and {} more pairs", pairs - missing.size())
                                   : ""));
    }
}

} // namespace

ns3::Ptr<ns3::ClusterTopology> BuildTopology(const Scenario& scenario)
{
    const TopologySpec& t = scenario.topology;
    ns3::Ptr<ns3::ClusterTopology> topo;
    try
    {
        if (t.kind == "switch")
        {
            topo = BuildSwitch(t);
        }
        else if (t.kind == "node" || t.kind == "cluster")
        {
            topo = BuildCluster(t);
        }
        else if (t.kind == "custom")
        {
            topo = BuildCustom(scenario);
        }
        else
        {
            throw ScenarioError(fmt::format("{}: 'topology.kind': unknown kind \"{}\"",
                                            Where(scenario, t.line), t.kind));
        }
    }
    catch (const std::invalid_argument& e)
    {
        // The loader checks every range the helper does; this names the file if one slips by.
        throw ScenarioError(fmt::format("{}: 'topology': {}", Where(scenario, t.line), e.what()));
    }
    if (topo->GetNGpus() != t.gpus)
    {
        throw std::logic_error(fmt::format("{}: built {} GPUs for a topology of {}",
                                           scenario.file.string(), topo->GetNGpus(), t.gpus));
    }
    CheckReachable(scenario, *topo);
    return topo;
}

ns3::Ptr<ns3::PhantoraTransport> InstallTransport(const Scenario& scenario,
                                                  ns3::Ptr<ns3::ClusterTopology> topology)
{
    const ns3::UintegerValue mtu(scenario.network.mtu);
    const ns3::UintegerValue header(scenario.network.headerBytes);
    if (scenario.network.transport == "flow")
    {
        ns3::FlowTransportHelper helper;
        helper.SetTransportAttribute("Mtu", mtu);
        helper.SetTransportAttribute("HeaderBytes", header);
        return helper.Install(topology);
    }
    ns3::PacketTransportHelper helper;
    helper.SetTransportAttribute("Mtu", mtu);
    helper.SetTransportAttribute("HeaderBytes", header);
    return helper.Install(topology);
}

} // namespace phantora
