// What every scenario script does: build a cluster, run one collective alone on it,
// report the simulated time.  Kept small so each script reads as its question.
#pragma once

#include "nccl/plan.h"
#include "ns3/command-line.h"
#include "ns3/flow-transport-helper.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/packet-transport-helper.h"
#include "ns3/phantora-topology-helper.h"
#include "ns3/simulator.h"

#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace phantora::scripts
{

/// Simulated time of \p plan (built once the simulation runs, as its Time values must be
/// made after the resolution is fixed) over every GPU of \p topology, on the flow-level
/// ("flow") or packet-level ("packet") network.
inline ns3::Time PlanTime(ns3::Ptr<ns3::ClusterTopology> topology,
                          const std::function<nccl::Plan()>& makePlan, const std::string& transport)
{
    ns3::Ptr<ns3::PhantoraTransport> net;
    if (transport == "packet")
    {
        net = ns3::PacketTransportHelper().Install(topology);
    }
    else
    {
        net = ns3::FlowTransportHelper().Install(topology);
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

/// Simulated time of a ring all-reduce of \p bytes over every GPU of \p topology.
inline ns3::Time RingAllReduceTime(ns3::Ptr<ns3::ClusterTopology> topology, uint64_t bytes,
                                   const std::string& transport)
{
    const uint32_t n = topology->GetNGpus();
    return PlanTime(
        topology, [n, bytes] { return nccl::MakeRingAllReducePlan(n, bytes); }, transport);
}

/// Bus bandwidth in GB/s of an all-reduce of \p bytes over \p n ranks that took \p t.
inline double AllReduceBusBw(uint64_t bytes, uint32_t n, ns3::Time t)
{
    return static_cast<double>(bytes) / t.GetSeconds() * 2.0 * (n - 1) / n / 1e9;
}

} // namespace phantora::scripts
