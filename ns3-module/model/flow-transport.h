#ifndef FLOW_TRANSPORT_H
#define FLOW_TRANSPORT_H

#include "cluster-topology.h"
#include "ecmp-route-cache.h"
#include "flow-completion-queue.h"
#include "max-min-fair-share.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "phantora-transport.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief Flow-level network: every Send is one fluid flow, and the active flows share
 * the links max-min fairly.
 *
 * The model, chosen so that a large uncongested transfer takes the same time as on the
 * packet-level transport (PhantoraNetDevice: store-and-forward, per-packet
 * DataRate::CalculateBytesTxTime, the same Mtu and HeaderBytes):
 *
 * - A transfer of S bytes travels as ceil(S / (Mtu - HeaderBytes)) packets (one header-only
 *   packet when S = 0), so it puts wire(S) = S + packets * HeaderBytes bytes on every link of
 *   its path.  The path is ClusterTopology::Route with a per-flow hash, so ECMP spreads flows
 *   the way a switch hashing 5-tuples does, and deterministically.
 * - Each direction of a link is a resource of capacity link.rate.  The rates of all active
 *   flows are the max-min fair allocation (progressive filling), recomputed whenever a flow
 *   starts or ends; a flow's wire bytes drain at its current rate.
 * - A flow is delivered at: the instant its last wire byte drains (rounded up to the Time
 *   resolution) + a per-flow tail.  The tail is what a lone flow on the same path takes on
 *   the packet-level model beyond its fluid drain time at the path's bottleneck rate: the
 *   propagation delays, the store-and-forward fill of the pipeline and the per-packet
 *   rounding of TxTime.  Hence a lone flow is delivered at exactly the packet-level instant;
 *   for h hops of equal rate R and n >= 2 packets that is
 *   sum_i TxTime(wire_i, R) + (h - 1) * TxTime(Mtu, R) + sum of delays
 *   (the last, partial packet waits behind the full one before it at every hop, so the
 *   store-and-forward term is that of a full packet; with one packet it is that packet's).
 *
 * What it ignores: queueing transients (a new flow gets its fair share at once, where a real
 * switch first drains the queues others built), congestion control and its ramp-up,
 * packet interleaving within a flow's lifetime (sharing is perfectly fluid), and the time a
 * rate change takes to reach the other links of the path (all rates change instantly).
 *
 * The work is split in three: routes come from an EcmpRouteCache; rates from a
 * MaxMinFairShare over the link directions, recomputed incrementally once per instant at
 * which flows start or end (it knows nothing of time); completions sit in a
 * FlowCompletionQueue under a single simulator event.  This class ties them together: it
 * maps the topology to the solver's resources, turns rates into drain instants and
 * delivers.  The two link directions in series through a forwarding node with exactly two
 * links (GPU - PCIe - NIC - fabric) always carry the same flows, so only the slower of them
 * takes part in the allocation.
 */
class FlowTransport : public PhantoraTransport
{
public:
    static TypeId GetTypeId();
    FlowTransport();
    ~FlowTransport() override;

    /// The network this transport runs on; set it once, before the first Send.
    void SetTopology(Ptr<ClusterTopology> topology);
    Ptr<ClusterTopology> GetTopology() const;

    // PhantoraTransport
    void Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
              DeliveredCallback onDelivered) override;
    /**
     * The NVSwitch's reduction and multicast at flow level: one fluid flow whose resources
     * are the up direction (GPU -> switch) of every source's link and the down direction of
     * every destination's link, each carrying the wire bytes of \p bytes.  The switch
     * combines at line rate, so the flow drains at the max-min rate of its slowest such
     * link: a reduce of n sources costs each source's link what a unicast would, and the
     * destination's link one copy (not n); a multicast costs the source's link one copy.
     * Delivery adds the tail of a lone two-hop flow (GPU -> switch -> GPU).  The switch is
     * the one node joined by a direct link to every GPU of the group (std::invalid_argument
     * naming the GPUs otherwise).
     */
    void SendThroughSwitch(const std::vector<uint32_t>& srcGpus,
                           const std::vector<uint32_t>& dstGpus, uint64_t bytes,
                           DeliveredCallback onDelivered) override;
    uint32_t GetNGpus() const override;
    uint64_t GetFlowNumbering() const override;
    void SetFlowNumbering(uint64_t flowsSent) override;

    /// Packets a transfer of \p bytes is cut into (1 for 0 bytes).
    uint64_t GetPacketCount(uint64_t bytes) const;
    /// Bytes a transfer of \p bytes puts on every link of its path, headers included.
    uint64_t GetWireBytes(uint64_t bytes) const;
    /**
     * The path Send gives a flow from \p srcGpu to \p dstGpu whose ECMP hash is \p flowHash:
     * ClusterTopology::Route's, read from a per-pair cache of the equal-cost paths.
     */
    std::vector<ClusterTopology::Hop> GetRoute(uint32_t srcGpu, uint32_t dstGpu, uint64_t flowHash);
    /**
     * Time from Send to delivery of \p bytes along \p path when no other flow is active:
     * the packet-level store-and-forward time plus the path's delays.
     */
    Time GetLoneFlowTime(const std::vector<ClusterTopology::Hop>& path, uint64_t bytes) const;

    /// Times rates were recomputed (one per instant at which flows started or ended).
    uint64_t GetRateRecomputations() const { return m_recomputations; }
    /// Times a running flow's rate changed (its completion moved).
    uint64_t GetRateChanges() const { return m_rateChanges; }
    uint64_t GetFlowsStarted() const { return m_flowsStarted; }
    uint64_t GetFlowsCompleted() const { return m_flowsCompleted; }
    uint32_t GetNActiveFlows() const { return m_rates.GetNActiveFlows(); }
    /// Active flows crossing link \p link in the a->b (\p forward) or b->a direction.
    uint32_t GetNActiveFlows(uint32_t link, bool forward) const;

    /**
     * Self-check for tests: recomputes the max-min allocation of all active flows from
     * scratch and returns the largest relative difference to the rates in use, or a negative
     * value when a recomputation is pending at this instant.
     */
    double CheckMaxMinFair() const;

protected:
    void DoDispose() override;

private:
    /// What the transport keeps per flow besides its rate (the solver's): its drain state.
    struct FlowState
    {
        double remaining{0};   ///< wire bytes left at lastUpdate
        int64_t lastUpdate{0}; ///< Time step of the last rate change
        Time tail;             ///< delivery after the last wire byte drained
        DeliveredCallback onDelivered;
    };

    /// Per link, the TxTime of the last two packet sizes asked for (full and last packet).
    struct TxCache
    {
        uint32_t wire[2]{0, 0};
        int64_t steps[2]{0, 0};
    };

    /// The solver's resources: both directions of every link, capacities in wire bytes per
    /// Time step.
    void BuildResources();
    /// Starts a flow over \p resources (m_pathResources) draining \p bytes' wire bytes,
    /// delivered \p loneTime after its start when alone.
    void StartFlow(uint64_t bytes, Time loneTime, DeliveredCallback onDelivered);
    /// The link joining GPU \p gpu to switch node \p sw directly, or UINT32_MAX.
    uint32_t SwitchLink(uint32_t gpu, uint32_t sw) const;
    void RequestUpdate();
    void Update();
    /// New drain instants for the flows whose rate the last recomputation changed.
    void ApplyRates();
    /// The simulator reached the earliest completion.
    void CompleteDue();
    void FlowFinished(uint32_t flow);
    /// Time steps to drain \p bytes at \p rate, rounded up (tolerating float noise).
    static int64_t DrainSteps(double bytes, double rate);
    /// DataRate::CalculateBytesTxTime of link \p link for \p wire bytes, in Time steps.
    int64_t TxSteps(uint32_t link, uint32_t wire) const;

    Ptr<ClusterTopology> m_topology;
    uint32_t m_mtu{4096};
    uint32_t m_headerBytes{48};

    MaxMinFairShare m_rates;
    FlowCompletionQueue m_completions;
    EcmpRouteCache m_routes;
    std::vector<FlowState> m_flows; ///< by the solver's flow id
    std::vector<MaxMinFairShare::RateChange> m_changes;
    std::vector<uint32_t> m_pathResources; ///< scratch: the resources of the flow being sent
    EventId m_updateEvent;
    bool m_updatePending{false};
    uint64_t m_flowCounter{0};
    mutable std::vector<TxCache> m_txCache;

    uint64_t m_recomputations{0};
    uint64_t m_rateChanges{0};
    uint64_t m_flowsStarted{0};
    uint64_t m_flowsCompleted{0};
};

} // namespace ns3

#endif
