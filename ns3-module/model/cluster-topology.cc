#include "cluster-topology.h"

#include "ns3/log.h"

#include <deque>
#include <limits>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ClusterTopology");

uint32_t ClusterTopology::AddGpu(const std::string& name)
{
    m_routesValid = false;
    m_nodes.push_back({NodeKind::Gpu, name, static_cast<uint32_t>(m_gpuNodes.size())});
    m_adjacent.emplace_back();
    m_gpuNodes.push_back(static_cast<uint32_t>(m_nodes.size() - 1));
    return m_gpuNodes.back();
}

uint32_t ClusterTopology::AddSwitch(const std::string& name, NodeKind kind)
{
    if (kind == NodeKind::Gpu)
    {
        throw std::invalid_argument("AddSwitch(" + name + "): use AddGpu for GPUs");
    }
    m_routesValid = false;
    m_nodes.push_back({kind, name, std::numeric_limits<uint32_t>::max()});
    m_adjacent.emplace_back();
    return static_cast<uint32_t>(m_nodes.size() - 1);
}

uint32_t ClusterTopology::AddLink(uint32_t a, uint32_t b, DataRate rate, Time delay,
                                  const std::string& kind)
{
    if (a >= m_nodes.size() || b >= m_nodes.size() || a == b)
    {
        throw std::invalid_argument("AddLink: bad node ids " + std::to_string(a) + ", " +
                                    std::to_string(b));
    }
    if (rate.GetBitRate() == 0)
    {
        throw std::invalid_argument("AddLink " + m_nodes[a].name + " - " + m_nodes[b].name +
                                    ": bandwidth must be positive");
    }
    if (delay.IsStrictlyNegative())
    {
        throw std::invalid_argument("AddLink " + m_nodes[a].name + " - " + m_nodes[b].name +
                                    ": latency must not be negative");
    }
    m_routesValid = false;
    m_links.push_back({a, b, rate, delay, kind});
    const auto id = static_cast<uint32_t>(m_links.size() - 1);
    m_adjacent[a].push_back(id);
    m_adjacent[b].push_back(id);
    return id;
}

uint32_t ClusterTopology::HopTarget(const Hop& hop) const
{
    const Link& l = m_links.at(hop.link);
    return hop.forward ? l.b : l.a;
}

void ClusterTopology::ComputeRoutes() const
{
    // One BFS per destination GPU over reversed edges; GPUs other than the
    // destination are never expanded, so no route transits a GPU.
    const uint32_t n = GetNNodes();
    constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
    m_nextHops.assign(GetNGpus(), std::vector<std::vector<Hop>>(n));
    for (uint32_t g = 0; g < GetNGpus(); ++g)
    {
        std::vector<uint32_t> dist(n, kInf);
        std::deque<uint32_t> queue;
        dist[m_gpuNodes[g]] = 0;
        queue.push_back(m_gpuNodes[g]);
        while (!queue.empty())
        {
            const uint32_t v = queue.front();
            queue.pop_front();
            if (m_nodes[v].kind == NodeKind::Gpu && v != m_gpuNodes[g])
            {
                continue;
            }
            for (uint32_t lid : m_adjacent[v])
            {
                const Link& l = m_links[lid];
                const uint32_t u = l.a == v ? l.b : l.a;
                if (dist[u] == kInf)
                {
                    dist[u] = dist[v] + 1;
                    queue.push_back(u);
                }
            }
        }
        for (uint32_t u = 0; u < n; ++u)
        {
            if (dist[u] == kInf || dist[u] == 0)
            {
                continue;
            }
            for (uint32_t lid : m_adjacent[u])
            {
                const Link& l = m_links[lid];
                const uint32_t v = l.a == u ? l.b : l.a;
                if (dist[v] + 1 == dist[u])
                {
                    m_nextHops[g][u].push_back({lid, l.a == u});
                }
            }
        }
    }
    m_routesValid = true;
}

const std::vector<ClusterTopology::Hop>& ClusterTopology::NextHops(uint32_t node,
                                                                   uint32_t dstGpu) const
{
    if (!m_routesValid)
    {
        ComputeRoutes();
    }
    const auto& hops = m_nextHops.at(dstGpu).at(node);
    if (hops.empty() && node != m_gpuNodes.at(dstGpu))
    {
        throw std::runtime_error("no path from " + m_nodes.at(node).name + " to " +
                                 m_nodes[m_gpuNodes[dstGpu]].name);
    }
    return hops;
}

std::vector<ClusterTopology::Hop> ClusterTopology::Route(uint32_t srcGpu, uint32_t dstGpu,
                                                         uint64_t flowHash) const
{
    std::vector<Hop> path;
    uint32_t node = m_gpuNodes.at(srcGpu);
    const uint32_t dst = m_gpuNodes.at(dstGpu);
    while (node != dst)
    {
        const auto& hops = NextHops(node, dstGpu);
        const Hop hop = hops[EcmpIndex(flowHash, node, static_cast<uint32_t>(hops.size()))];
        path.push_back(hop);
        node = HopTarget(hop);
    }
    return path;
}

uint32_t ClusterTopology::EcmpIndex(uint64_t flowHash, uint32_t node, uint32_t nChoices)
{
    if (nChoices <= 1)
    {
        return 0;
    }
    // splitmix64's finalizer over flow hash and node: consecutive flow numbers spread
    // evenly, and salting with the node keeps successive tiers from all making the same
    // choice.
    uint64_t z = flowHash + 0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(node) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<uint32_t>(z % nChoices);
}

void ClusterTopology::CheckConnected() const
{
    for (uint32_t s = 0; s < GetNGpus(); ++s)
    {
        for (uint32_t d = 0; d < GetNGpus(); ++d)
        {
            if (s != d)
            {
                NextHops(m_gpuNodes[s], d);
            }
        }
    }
}

} // namespace ns3
