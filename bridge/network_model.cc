#include "network_model.h"

#include "topology_from_scenario.h"

#include "ns3/data-rate.h"
#include "ns3/flow-transport-helper.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/packet-transport-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace phantora
{

namespace
{

ns3::Time Ns(int64_t ns)
{
    return ns3::Time::FromInteger(ns, ns3::Time::NS);
}

// Network instants are picoseconds; a rank can only observe whole nanoseconds, and
// rounding up keeps "done" from being reported before it happened.
int64_t CeilNs(ns3::Time t)
{
    const int64_t ps = t.GetPicoSeconds();
    return ps / 1000 + (ps % 1000 > 0 ? 1 : 0);
}

} // namespace

NetworkModel::NetworkModel(const Scenario& scenario)
{
    static const bool resolutionSet = []
    {
        ns3::Time::SetResolution(ns3::Time::PS);
        return true;
    }();
    (void)resolutionSet;
    m_topology = BuildTopology(scenario);
    const ns3::UintegerValue mtu(scenario.network.mtu);
    const ns3::UintegerValue header(scenario.network.headerBytes);
    if (scenario.network.transport == "flow")
    {
        ns3::FlowTransportHelper helper;
        helper.SetTransportAttribute("Mtu", mtu);
        helper.SetTransportAttribute("HeaderBytes", header);
        m_transport = helper.Install(m_topology);
        m_transportName = "flow";
    }
    else
    {
        ns3::PacketTransportHelper helper;
        helper.SetTransportAttribute("Mtu", mtu);
        helper.SetTransportAttribute("HeaderBytes", header);
        m_transport = helper.Install(m_topology);
        m_transportName = "packet";
    }
}

NetworkModel::~NetworkModel()
{
    ns3::Simulator::Destroy();
}

uint32_t NetworkModel::GpuCount() const
{
    return m_topology->GetNGpus();
}

int64_t NetworkModel::NowNs() const
{
    return CeilNs(ns3::Simulator::Now());
}

void NetworkModel::StartCollective(int64_t startNs, ns3::NcclPlan plan, std::vector<uint32_t> gpus,
                                   DoneFn onDone)
{
    const ns3::Time start = Ns(startNs);
    if (start < ns3::Simulator::Now())
    {
        throw std::logic_error("collective starting at " + std::to_string(startNs) +
                               " ns lies in the network's past (" + std::to_string(NowNs()) +
                               " ns)");
    }
    ++m_inFlight;
    auto done = [this, onDone = std::move(onDone)]()
    {
        --m_inFlight;
        m_completed = true;
        onDone(CeilNs(ns3::Simulator::Now()));
        // Hand control back to the bridge: ranks may be waiting for exactly this.
        ns3::Simulator::Stop();
    };
    ns3::Simulator::Schedule(
        start - ns3::Simulator::Now(),
        [this, plan = std::move(plan), gpus = std::move(gpus), done = std::move(done)]() mutable {
            ns3::NcclPlanExecutor::Start(m_transport, std::move(plan), std::move(gpus),
                                         std::move(done));
        });
}

bool NetworkModel::RunUntil(int64_t horizonNs)
{
    if (m_inFlight == 0)
    {
        return false;
    }
    m_completed = false;
    ns3::EventId stop;
    if (horizonNs != kForever)
    {
        const ns3::Time horizon = Ns(horizonNs);
        if (horizon <= ns3::Simulator::Now())
        {
            return false;
        }
        stop = ns3::Simulator::Schedule(horizon - ns3::Simulator::Now(),
                                        [] { ns3::Simulator::Stop(); });
    }
    ns3::Simulator::Run();
    ns3::Simulator::Cancel(stop);
    return m_completed;
}

} // namespace phantora
