// What every scenario script does: build a cluster, run one collective alone on it,
// report the simulated time.  Kept small so each script reads as its question.
// Collectives are planned by the NCCL model (nccl::MakePlan), the code path of
// phantora-nccl-tests and of live runs; a naive single ring only when asked by name.
#pragma once

#include "nccl/plan.h"
#include "nccl/tuning.h"
#include "ns3/command-line.h"
#include "ns3/flow-transport-helper.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/packet-transport-helper.h"
#include "ns3/phantora-topology-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace phantora::scripts
{

/// Bytes of every packet that carry no data: InfiniBand's LRH 8 + BTH 12 + ICRC 4 + VCRC 2,
/// as the cluster-*-ib scenarios' [network] header_bytes (with their mtu = 4096).
inline constexpr uint32_t kIbHeaderBytes = 26;

/// Simulated time of \p plan (built once the simulation runs, as its Time values must be
/// made after the resolution is fixed) over every GPU of \p topology, on the flow-level
/// ("flow") or packet-level ("packet") network with 4096-byte packets of \p headerBytes.
inline ns3::Time PlanTime(ns3::Ptr<ns3::ClusterTopology> topology,
                          const std::function<nccl::Plan()>& makePlan, const std::string& transport,
                          uint32_t headerBytes = kIbHeaderBytes)
{
    ns3::Ptr<ns3::PhantoraTransport> net;
    const ns3::UintegerValue mtu(4096);
    const ns3::UintegerValue header(headerBytes);
    if (transport == "packet")
    {
        ns3::PacketTransportHelper helper;
        helper.SetTransportAttribute("Mtu", mtu);
        helper.SetTransportAttribute("HeaderBytes", header);
        net = helper.Install(topology);
    }
    else
    {
        ns3::FlowTransportHelper helper;
        helper.SetTransportAttribute("Mtu", mtu);
        helper.SetTransportAttribute("HeaderBytes", header);
        net = helper.Install(topology);
    }
    std::vector<uint32_t> gpus(topology->GetNGpus());
    std::iota(gpus.begin(), gpus.end(), 0);
    ns3::Time done;
    ns3::Simulator::ScheduleNow(
        [&] {
            ns3::NcclPlanExecutor::Start(net, makePlan(), gpus,
                                         [&] { done = ns3::Simulator::Now(); });
        });
    ns3::Simulator::Run();
    ns3::Simulator::Destroy();
    return done;
}

/// How a script plans its collective: "auto" (NCCL's choice of algorithm, protocol and
/// channels), "ring" or "tree" (NCCL_ALGO), all planned by nccl::MakePlan exactly as
/// phantora-nccl-tests and live runs plan them; "naive-ring" is a single ring of one
/// channel without protocol latencies, kept only for comparison with older figures.
inline bool IsKnownAlgorithm(const std::string& a)
{
    return a == "auto" || a == "ring" || a == "tree" || a == "naive-ring";
}

/// The servers and fabric of the shipped cluster-*-h100-ib scenarios (NVSwitch servers of
/// 8 H100s, a 400 Gb/s NIC per GPU on its rail's leaf), so a script answers for the same
/// machine phantora-nccl-tests and phantora-cluster simulate with those files.
inline ns3::NodeSpec H100Server()
{
    ns3::NodeSpec node;
    node.intraRate = ns3::DataRate("3825Gbps"); // 478.125 GB/s: 18 NVLink4 x 26.5625 GB/s
    node.intraDelay = ns3::NanoSeconds(500);
    node.pcieRate = ns3::DataRate("512Gbps"); // 64 GB/s: PCIe 5 x16 to the NIC
    node.pcieDelay = ns3::NanoSeconds(500);
    return node;
}

inline ns3::FabricSpec InfiniBandFabric()
{
    ns3::FabricSpec fabric;
    fabric.kind = "ib";
    fabric.nicRate = ns3::DataRate("400Gbps");
    fabric.nicDelay = ns3::NanoSeconds(600);
    fabric.spineDelay = ns3::NanoSeconds(600);
    return fabric;
}

struct CollectiveResult
{
    ns3::Time time;
    std::string algorithm; ///< as planned ("ring", "tree"; "naive-ring")
    std::string protocol;  ///< "LL", "LL128", "Simple"; empty for the naive ring
    uint32_t channels{1};
};

/// Simulated time of an all-reduce of \p bytes over every GPU of \p topology (servers of
/// \p gpusPerNode GPUs), planned by \p algorithm (IsKnownAlgorithm) under \p config
/// (the [nccl] table of a scenario; default: NCCL's own orders of magnitude).
inline CollectiveResult AllReduce(ns3::Ptr<ns3::ClusterTopology> topology, uint32_t gpusPerNode,
                                  uint64_t bytes, const std::string& transport,
                                  const std::string& algorithm = "auto",
                                  nccl::Config config = nccl::Config{})
{
    const uint32_t n = topology->GetNGpus();
    CollectiveResult r;
    if (algorithm == "naive-ring")
    {
        r.algorithm = algorithm;
        r.time = PlanTime(
            topology, [n, bytes] { return nccl::MakeRingAllReducePlan(n, bytes); }, transport);
        return r;
    }
    config.algorithm = algorithm == "auto" ? "" : algorithm;
    nccl::CommShape shape;
    shape.nRanks = n;
    shape.ranksPerNode = std::min(n, gpusPerNode);
    const nccl::Choice choice =
        nccl::Choose(nccl::CollectiveKind::AllReduce, shape, bytes, config);
    r.protocol = nccl::ProtocolName(choice.protocol);
    r.channels = choice.nChannels;
    r.time = PlanTime(
        topology,
        [&]
        {
            nccl::Plan plan =
                nccl::MakePlan(nccl::CollectiveKind::AllReduce, shape, bytes, config, choice);
            r.algorithm = plan.algorithm;
            return plan;
        },
        transport);
    return r;
}

/// "ring simple, 16 channels", "naive-ring, 1 channel".
inline std::string Describe(const CollectiveResult& r)
{
    return r.algorithm + (r.protocol.empty() ? "" : " " + r.protocol) + ", " +
           std::to_string(r.channels) + (r.channels == 1 ? " channel" : " channels");
}

/// Bus bandwidth in GB/s of an all-reduce of \p bytes over \p n ranks that took \p t.
inline double AllReduceBusBw(uint64_t bytes, uint32_t n, ns3::Time t)
{
    return static_cast<double>(bytes) / t.GetSeconds() * 2.0 * (n - 1) / n / 1e9;
}

} // namespace phantora::scripts
