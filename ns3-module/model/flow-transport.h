#ifndef FLOW_TRANSPORT_H
#define FLOW_TRANSPORT_H

#include "cluster-topology.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "phantora-transport.h"

#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
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
 * Rates are recomputed incrementally, once per instant at which flows start or end: only
 * the new flows, the flows bottlenecked where a flow started or ended, are released and
 * re-filled while all others hold their rates; then the bottleneck condition (each flow
 * crosses a saturated link on which no flow is faster) is checked on every link the released
 * flows cross, and violators are released too until it holds everywhere.  The result is the
 * global max-min allocation (CheckMaxMinFair recomputes it from scratch to prove it), at the
 * cost of the links around the change rather than of the whole network.  Completions sit in
 * a heap ordered by drain time under a single simulator event, so a rate change costs a sift
 * rather than a cancelled and a new event.  The two link directions in series through a
 * forwarding node with exactly two links (GPU - PCIe - NIC - fabric) always carry the same
 * flows, so only the slower of them takes part in the allocation.
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
    uint32_t GetNActiveFlows() const { return m_nActive; }
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
    static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

    /// One active flow on a resource: the flow and which of its resources this is.
    struct Entry
    {
        uint32_t flow;
        uint32_t hop;
    };

    /// One direction of a link.  The fields a recomputation reads come first (one cache line).
    struct Resource
    {
        uint64_t touched{0};       ///< filling pass that last touched it
        uint32_t local{0};         ///< its index in that pass (m_touched, m_localRes)
        uint32_t nBottlenecked{0}; ///< flows whose bottleneck this is
        double capacity{0};        ///< wire bytes per Time step
        double load{0};            ///< sum of the flows' rates, kept up to date incrementally
        std::vector<Entry> flows;
        double maxUpper{0}; ///< no flow here is faster (may be stale high after slowdowns)
        double level{0};    ///< rate of the flows bottlenecked here: the fastest, if any
        uint32_t bottleneckHead{kNone}; ///< first of them (list through Flow::bNext)
        uint32_t alias{kNone};          ///< set when another resource always carries the same flows
        bool dirty{false};              ///< lost a flow since the last recomputation
        uint64_t bottleneckReleased{0}; ///< recomputation that released all its bottlenecked
    };

    /// One active flow; the fields a recomputation reads come first.
    struct Flow
    {
        uint32_t nRes{0};           ///< resources along the path that can bind (see ResOf)
        uint32_t bottleneck{kNone}; ///< a saturated resource where no flow is faster
        double rate{0};             ///< wire bytes per Time step; 0 until first allocated
        uint64_t released{0};       ///< recomputation that released it
        double newRate{0};          ///< as filled by the last pass
        uint32_t newBottleneck{kNone};
        uint32_t bNext{kNone}; ///< neighbours in the bottleneck's list
        uint32_t bPrev{kNone};
        uint32_t heapPos{kNone}; ///< index in m_finishHeap
        double remaining{0};     ///< wire bytes left at lastUpdate
        int64_t lastUpdate{0};   ///< Time step of the last rate change
        int64_t finishStep{0};   ///< when the last wire byte drains at this rate
        uint64_t finishSeq{0};   ///< orders flows draining at the same step
        Time tail;               ///< delivery after the last wire byte drained
        DeliveredCallback onDelivered;
        bool active{false};
    };

    /*
     * A filling pass copies the released flows and the resources they cross into these
     * dense arrays first: the progressive filling then runs in cache, away from the
     * scattered Flow and Resource records.
     */
    struct LocalResource
    {
        double residual;        ///< capacity left to the flows not yet frozen
        double oldRates;        ///< the released flows' rates before this recomputation
        double minFrozen;       ///< slowest released flow frozen here
        uint32_t nReleased;     ///< released flows crossing it
        uint32_t count;         ///< those not yet frozen
        uint32_t nBottReleased; ///< released flows that had it as bottleneck
        uint32_t flowsBegin;    ///< its released flows in m_localResFlows
    };

    struct LocalFlow
    {
        double newRate;
        uint32_t hopsBegin;  ///< its resources in m_localHops
        uint32_t bottleneck; ///< local index of the resource that froze it
        bool frozen;
    };

    /// Per link, the TxTime of the last two packet sizes asked for (full and last packet).
    struct TxCache
    {
        uint32_t wire[2]{0, 0};
        int64_t steps[2]{0, 0};
    };

    /// A local resource in the filling pass's heap, by share.
    struct HeapItem
    {
        double share;
        uint32_t resource;
    };

    /// An active flow in the completion heap; ties drain in the order they were scheduled.
    struct FinishItem
    {
        int64_t step;
        uint64_t seq;
        uint32_t flow;

        bool operator<(const FinishItem& o) const
        {
            return step < o.step || (step == o.step && seq < o.seq);
        }
    };

    /// One node of a pair's equal-cost path DAG; the destination has no hops.
    struct DagNode
    {
        uint32_t hopsBegin;
        uint32_t nHops;
        uint32_t node; ///< topology node, which salts the ECMP choice
    };

    struct DagHop
    {
        ClusterTopology::Hop hop;
        uint32_t next; ///< DagNode at the far end
    };

    /// The resources flow \p id crosses, and its index in each one's list.
    std::span<const uint32_t> ResOf(uint32_t id) const
    {
        return {m_flowRes.data() + static_cast<size_t>(id) * m_stride, m_flows[id].nRes};
    }
    uint32_t& SlotOf(uint32_t id, uint32_t hop)
    {
        return m_flowSlots[static_cast<size_t>(id) * m_stride + hop];
    }
    void Restride(uint32_t stride);

    void BuildResources();
    void FillRoute(uint32_t srcGpu, uint32_t dstGpu, uint64_t flowHash);
    void RequestUpdate();
    void Update();
    void Release(uint32_t flow);
    void ReleaseBottlenecked(uint32_t resource);
    void Fill();
    void Freeze(uint32_t localFlow, double rate, uint32_t localResource);
    /// Freezes the released flows of local resource \p j not frozen yet at \p share.
    void FreezeAll(uint32_t j, double share);
    /// Adds the held flows bottlenecked at \p r to m_violators, once per recomputation.
    void CollectBottlenecked(uint32_t r);
    bool Validate();
    void Apply();
    void SetBottleneck(uint32_t flow, uint32_t resource);
    void OnFinishEvent();
    void FlowFinished(uint32_t flow);
    void SyncFinishEvent();
    void HeapUpdate(uint32_t flow);
    uint32_t HeapPop();
    uint32_t ResolveAlias(uint32_t resource) const;
    /// Time steps to drain \p bytes at \p rate, rounded up (tolerating float noise).
    static int64_t DrainSteps(double bytes, double rate);
    /// DataRate::CalculateBytesTxTime of link \p link for \p wire bytes, in Time steps.
    int64_t TxSteps(uint32_t link, uint32_t wire) const;

    Ptr<ClusterTopology> m_topology;
    uint32_t m_mtu{4096};
    uint32_t m_headerBytes{48};

    std::vector<Resource> m_resources;
    std::vector<Flow> m_flows;
    // Flows' resource lists live in two flat arrays, m_stride entries per flow id, rather than
    // in per-flow vectors: the rate allocation walks them constantly.
    std::vector<uint32_t> m_flowRes;
    std::vector<uint32_t> m_flowSlots;
    uint32_t m_stride{8};
    std::vector<uint32_t> m_freeFlows;
    std::vector<uint32_t> m_newFlows;
    std::vector<uint32_t> m_dirtyResources;
    std::vector<FinishItem> m_finishHeap;
    EventId m_updateEvent;
    bool m_updatePending{false};
    EventId m_finishEvent;
    int64_t m_finishEventStep{-1}; ///< step m_finishEvent fires at, -1 when none
    uint64_t m_finishSeq{0};
    uint64_t m_flowCounter{0};
    uint32_t m_nActive{0};
    mutable std::vector<TxCache> m_txCache;

    // recomputation scratch, kept to avoid reallocating
    uint64_t m_pass{0};
    uint64_t m_touchPass{0};
    std::vector<uint32_t> m_released;
    std::vector<uint32_t> m_touched;
    std::vector<LocalResource> m_localRes;
    std::vector<LocalFlow> m_localFlows;
    std::vector<uint32_t> m_localHops;     ///< per local flow, local resource indices
    std::vector<uint32_t> m_localResFlows; ///< per local resource, local flow indices
    std::vector<uint32_t> m_violators;
    std::vector<HeapItem> m_heap;
    uint32_t m_unfrozen{0}; ///< released flows the filling pass has yet to freeze

    // Route cache: the topology's next-hop tables are large and scattered, and a flow's route
    // is looked up hop by hop; the few pairs a collective uses fit in cache as DAGs.
    std::unordered_map<uint64_t, uint32_t> m_routeDags; ///< (src << 32 | dst) -> its first DagNode
    std::vector<DagNode> m_dagNodes;
    std::vector<DagHop> m_dagHops;
    std::vector<uint32_t> m_dagIndexOf;       ///< scratch while building: topology node -> DagNode
    std::vector<ClusterTopology::Hop> m_path; ///< the route being filled

    uint64_t m_recomputations{0};
    uint64_t m_rateChanges{0};
    uint64_t m_flowsStarted{0};
    uint64_t m_flowsCompleted{0};
};

} // namespace ns3

#endif
