#ifndef MAX_MIN_FAIR_SHARE_H
#define MAX_MIN_FAIR_SHARE_H

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief The max-min fair rates of flows over shared resources, kept up to date as flows
 * come and go.  Pure arithmetic: no simulator, no time; FlowTransport drives it.
 *
 * A resource (one direction of a link) has a capacity; a flow crosses a list of resources.
 * The allocation is max-min fair: every flow crosses a saturated resource (its bottleneck)
 * on which no flow is faster.  Rates are in whatever unit the capacities are.
 *
 * Recompute() works incrementally, once per batch of arrivals and departures: only the new
 * flows, the flows bottlenecked where a flow started or ended, are released and re-filled
 * (progressive filling) while all others hold their rates; then the bottleneck condition is
 * checked on every resource the released flows cross, and violators are released too until
 * it holds everywhere.  The result is the global max-min allocation (CheckMaxMinFair
 * recomputes it from scratch to prove it), at the cost of the resources around the change
 * rather than of the whole network.
 *
 * A resource may be declared an alias of another that always carries the same flows (two
 * link directions in series through a forwarding node with two links): it then takes no
 * part in the allocation, and the slower of the two must be the one kept.
 */
class MaxMinFairShare
{
public:
    static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

    /// A flow whose rate the last Recompute() changed, and its rate before (0: a new flow).
    struct RateChange
    {
        uint32_t flow;
        double oldRate;
    };

    /// One resource per capacity (all positive), no aliases; flows keep their ids but must
    /// all have been removed.
    void SetResources(const std::vector<double>& capacities);
    /// Resource \p r always carries the same flows as \p to, whose capacity is not larger.
    void SetAlias(uint32_t r, uint32_t to);
    uint32_t GetNResources() const { return static_cast<uint32_t>(m_resources.size()); }
    double GetCapacity(uint32_t r) const { return m_resources[r].capacity; }
    bool IsAlias(uint32_t r) const { return m_resources[r].alias != kNone; }
    /// The resource that stands for \p r in the allocation (\p r itself unless an alias).
    uint32_t ResolveAlias(uint32_t r) const;

    /**
     * Adds a flow over the resources of \p path (aliases are skipped); it has rate 0 until
     * the next Recompute().  Returns its id, which RemoveFlow frees for a later flow.
     */
    uint32_t AddFlow(std::span<const uint32_t> path);
    /// Removes flow \p id; what it held is handed out at the next Recompute().
    void RemoveFlow(uint32_t id);

    /**
     * Brings the rates up to date with the flows added and removed since the last call.
     * Fills \p changed with the flows whose rate moved (beyond float noise), in a fixed
     * order; returns false, leaving \p changed alone, when nothing needed recomputing.
     */
    bool Recompute(std::vector<RateChange>& changed);

    double GetRate(uint32_t id) const { return m_flows[id].rate; }
    uint32_t GetNActiveFlows() const { return m_nActive; }
    /// Active flows crossing resource \p r (or the resource it is an alias of).
    uint32_t GetNFlowsOn(uint32_t r) const;

    /**
     * Self-check for tests: recomputes the max-min allocation of all active flows from
     * scratch and returns the largest relative difference to the rates in use.  Only
     * meaningful right after Recompute().
     */
    double CheckMaxMinFair() const;

    /// Forgets every flow and resource.
    void Clear();

private:
    /// One active flow on a resource: the flow and which of its resources this is.
    struct Entry
    {
        uint32_t flow;
        uint32_t hop;
    };

    /// One resource.  The fields a recomputation reads come first (one cache line).
    struct Resource
    {
        uint64_t touched{0};       ///< filling pass that last touched it
        uint32_t local{0};         ///< its index in that pass (m_touched, m_localRes)
        uint32_t nBottlenecked{0}; ///< flows whose bottleneck this is
        double capacity{0};
        double load{0}; ///< sum of the flows' rates, kept up to date incrementally
        std::vector<Entry> flows;
        double maxUpper{0}; ///< no flow here is faster (may be stale high after slowdowns)
        double level{0};    ///< rate of the flows bottlenecked here: the fastest, if any
        uint32_t bottleneckHead{kNone}; ///< first of them (list through Flow::bNext)
        uint32_t alias{kNone};          ///< set when another resource always carries the same flows
        bool dirty{false};              ///< lost a flow since the last recomputation
        uint64_t bottleneckReleased{0}; ///< recomputation that released all its bottlenecked
    };

    /// One flow; the fields a recomputation reads come first.
    struct Flow
    {
        uint32_t nRes{0};           ///< resources along the path that can bind (see ResOf)
        uint32_t bottleneck{kNone}; ///< a saturated resource where no flow is faster
        double rate{0};             ///< 0 until first allocated
        uint64_t released{0};       ///< recomputation that released it
        double newRate{0};          ///< as filled by the last pass
        uint32_t newBottleneck{kNone};
        uint32_t bNext{kNone}; ///< neighbours in the bottleneck's list
        uint32_t bPrev{kNone};
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

    /// A local resource in the filling pass's heap, by share.
    struct HeapItem
    {
        double share;
        uint32_t resource;
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

    void Release(uint32_t flow);
    void ReleaseBottlenecked(uint32_t resource);
    void Fill();
    void Freeze(uint32_t localFlow, double rate, uint32_t localResource);
    /// Freezes the released flows of local resource \p j not frozen yet at \p share.
    void FreezeAll(uint32_t j, double share);
    /// Adds the held flows bottlenecked at \p r to m_violators, once per recomputation.
    void CollectBottlenecked(uint32_t r);
    bool Validate();
    void Apply(std::vector<RateChange>& changed);
    void SetBottleneck(uint32_t flow, uint32_t resource);

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
    uint32_t m_nActive{0};

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
};

} // namespace ns3

#endif
