// The bridge's handle on the ns-3 simulation: builds the cluster network from the
// scenario, starts collectives on it at given instants and runs the ns-3
// scheduler forward, never past what the ranks allow.
#pragma once

#include "ns3/cluster-topology.h"
#include "ns3/event-id.h"
#include "ns3/nccl-plan.h"
#include "ns3/phantora-transport.h"
#include "ns3/ptr.h"
#include "scenario.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace phantora
{

class NetworkModel
{
public:
    using DoneFn = std::function<void(int64_t endNs)>;
    static constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

    /// Sets ns-3's time resolution to picoseconds: call before any other ns-3 use.
    explicit NetworkModel(const Scenario& scenario);
    ~NetworkModel();
    NetworkModel(const NetworkModel&) = delete;
    NetworkModel& operator=(const NetworkModel&) = delete;

    /// Runs \p plan among \p gpus from \p startNs (not before the network's present).
    void StartCollective(int64_t startNs, ns3::NcclPlan plan, std::vector<uint32_t> gpus,
                         DoneFn onDone);

    /// Runs the network up to \p horizonNs, returning early (true) as soon as a
    /// collective completes, so the caller can answer ranks before time moves on.
    bool RunUntil(int64_t horizonNs);

    bool Busy() const { return m_inFlight > 0; }
    int64_t NowNs() const;
    uint32_t GpuCount() const;
    const char* TransportName() const { return m_transportName; }

private:
    ns3::Ptr<ns3::ClusterTopology> m_topology;
    ns3::Ptr<ns3::PhantoraTransport> m_transport;
    const char* m_transportName;
    uint64_t m_inFlight{0};
    bool m_completed{false};
};

} // namespace phantora
