#include "ecmp-route-cache.h"

namespace ns3
{

const std::vector<ClusterTopology::Hop>& EcmpRouteCache::Route(const ClusterTopology& topology,
                                                               uint32_t srcGpu, uint32_t dstGpu,
                                                               uint64_t flowHash)
{
    // Bounds the cache for traffic that touches very many pairs (all-to-all on a big
    // cluster); past it, routes come from the topology directly.
    constexpr size_t kMaxCachedHops = size_t{1} << 22;
    const uint64_t key = (static_cast<uint64_t>(srcGpu) << 32) | dstGpu;
    auto it = m_routeDags.find(key);
    if (it == m_routeDags.end())
    {
        if (m_dagHops.size() >= kMaxCachedHops)
        {
            m_path = topology.Route(srcGpu, dstGpu, flowHash);
            return m_path;
        }
        // Breadth-first over the next-hop sets: DagNodes are numbered in the order they are
        // found, which is the order they are filled in.
        const auto base = static_cast<uint32_t>(m_dagNodes.size());
        m_dagIndexOf.resize(topology.GetNNodes(), kNone);
        std::vector<uint32_t> order{topology.GetGpuNode(srcGpu)};
        m_dagIndexOf[order[0]] = base;
        for (size_t k = 0; k < order.size(); ++k)
        {
            const auto& hops = topology.NextHops(order[k], dstGpu);
            m_dagNodes.push_back({static_cast<uint32_t>(m_dagHops.size()),
                                  static_cast<uint32_t>(hops.size()), order[k]});
            for (const auto& hop : hops)
            {
                const uint32_t next = topology.HopTarget(hop);
                if (m_dagIndexOf[next] == kNone)
                {
                    m_dagIndexOf[next] = base + static_cast<uint32_t>(order.size());
                    order.push_back(next);
                }
                m_dagHops.push_back({hop, m_dagIndexOf[next]});
            }
        }
        for (uint32_t v : order)
        {
            m_dagIndexOf[v] = kNone;
        }
        it = m_routeDags.emplace(key, base).first;
    }
    // The walk of ClusterTopology::Route (GetRoute is tested against it).
    m_path.clear();
    for (uint32_t n = it->second; m_dagNodes[n].nHops != 0;)
    {
        const DagNode& dn = m_dagNodes[n];
        const DagHop& dh =
            m_dagHops[dn.hopsBegin + ClusterTopology::EcmpIndex(flowHash, dn.node, dn.nHops)];
        m_path.push_back(dh.hop);
        n = dh.next;
    }
    return m_path;
}

void EcmpRouteCache::Clear()
{
    m_routeDags.clear();
    m_dagNodes.clear();
    m_dagHops.clear();
}

} // namespace ns3
