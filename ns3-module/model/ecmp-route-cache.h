#ifndef ECMP_ROUTE_CACHE_H
#define ECMP_ROUTE_CACHE_H

#include "cluster-topology.h"

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief ClusterTopology::Route, read from a per-pair cache of the equal-cost paths.
 *
 * The topology's next-hop tables are large and scattered, and a flow's route is looked up
 * hop by hop; the few pairs a collective uses fit in cache as DAGs: per GPU pair, every
 * node of its equal-cost paths with the hops it may take.  A flow's route is then a walk
 * down the DAG, ECMP picking a hop at each node exactly as ClusterTopology::Route does.
 */
class EcmpRouteCache
{
public:
    /**
     * The path of a flow from \p srcGpu to \p dstGpu whose ECMP hash is \p flowHash, in
     * \p topology (which must be the same one from call to call, until Clear()).  Valid
     * until the next call.
     */
    const std::vector<ClusterTopology::Hop>& Route(const ClusterTopology& topology, uint32_t srcGpu,
                                                   uint32_t dstGpu, uint64_t flowHash);
    /// Forgets every pair (the topology changed).
    void Clear();

private:
    static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

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

    std::unordered_map<uint64_t, uint32_t> m_routeDags; ///< (src << 32 | dst) -> its first DagNode
    std::vector<DagNode> m_dagNodes;
    std::vector<DagHop> m_dagHops;
    std::vector<uint32_t> m_dagIndexOf;       ///< scratch while building: topology node -> DagNode
    std::vector<ClusterTopology::Hop> m_path; ///< the route being filled
};

} // namespace ns3

#endif
