#ifndef CLUSTER_TOPOLOGY_H
#define CLUSTER_TOPOLOGY_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/simple-ref-count.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief The cluster as a graph: GPUs, forwarding nodes (NVSwitch, PCIe switch, NIC,
 * leaf/spine switch) and full-duplex links, with shortest-path ECMP routes.
 *
 * Both transports are built from this one description, so the packet-level and the
 * flow-level network always see the same links and the same routes.
 */
class ClusterTopology : public SimpleRefCount<ClusterTopology>
{
public:
    enum class NodeKind
    {
        Gpu,    ///< endpoint: traffic starts or ends here, never passes through
        Switch, ///< forwards (NVSwitch, PCIe switch, leaf, spine)
        Nic,    ///< forwards between a GPU/PCIe side and the fabric
    };

    struct Node
    {
        NodeKind kind;
        std::string name;
        uint32_t gpuIndex; ///< for GPUs: 0 .. GetNGpus()-1; otherwise UINT32_MAX
    };

    /// A full-duplex link: each direction has its own \p rate.
    struct Link
    {
        uint32_t a;
        uint32_t b;
        DataRate rate;
        Time delay;
        std::string kind; ///< "nvlink", "pcie", "ib", "roce", "ethernet": channel type
    };

    /// One direction of a link: link id and whether it runs a->b (forward) or b->a.
    struct Hop
    {
        uint32_t link;
        bool forward;
    };

    uint32_t AddGpu(const std::string& name);
    uint32_t AddSwitch(const std::string& name, NodeKind kind = NodeKind::Switch);
    uint32_t AddLink(uint32_t a, uint32_t b, DataRate rate, Time delay, const std::string& kind);

    uint32_t GetNGpus() const { return static_cast<uint32_t>(m_gpuNodes.size()); }
    uint32_t GetNNodes() const { return static_cast<uint32_t>(m_nodes.size()); }
    const Node& GetNode(uint32_t id) const { return m_nodes.at(id); }
    const Link& GetLink(uint32_t id) const { return m_links.at(id); }
    uint32_t GetNLinks() const { return static_cast<uint32_t>(m_links.size()); }
    uint32_t GetGpuNode(uint32_t gpuIndex) const { return m_gpuNodes.at(gpuIndex); }
    /// Ids of the links incident to node \p node.
    const std::vector<uint32_t>& GetAdjacentLinks(uint32_t node) const
    {
        return m_adjacent.at(node);
    }

    /**
     * Links adjacent to \p node towards which \p dstGpu is one hop closer (the ECMP set).
     * Empty when \p node is the destination.  Throws std::runtime_error when no path exists.
     */
    const std::vector<Hop>& NextHops(uint32_t node, uint32_t dstGpu) const;

    /// The hops from \p srcGpu to \p dstGpu; among equal-cost paths EcmpIndex(flowHash, node,
    /// n) picks one at every branching node, as a switch hashing a flow's 5-tuple does.
    std::vector<Hop> Route(uint32_t srcGpu, uint32_t dstGpu, uint64_t flowHash = 0) const;

    /**
     * The ECMP choice of node \p node among \p nChoices equal-cost next hops for a flow of
     * hash \p flowHash.  Both transports route with it (the packet level per switch, the
     * flow level through Route), so a flow numbered alike takes the same path on both.
     */
    static uint32_t EcmpIndex(uint64_t flowHash, uint32_t node, uint32_t nChoices);

    /// The node at the far end of \p hop.
    uint32_t HopTarget(const Hop& hop) const;

    /// Throws std::runtime_error naming the pair when some GPU cannot reach another.
    void CheckConnected() const;

private:
    void ComputeRoutes() const;

    std::vector<Node> m_nodes;
    std::vector<Link> m_links;
    std::vector<uint32_t> m_gpuNodes;
    std::vector<std::vector<uint32_t>> m_adjacent; ///< per node: incident link ids
    // m_nextHops[dstGpu][node]: computed lazily, invalidated by any Add*.
    mutable std::vector<std::vector<std::vector<Hop>>> m_nextHops;
    mutable bool m_routesValid{false};
};

} // namespace ns3

#endif
