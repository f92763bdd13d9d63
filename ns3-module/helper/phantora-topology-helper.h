#ifndef PHANTORA_TOPOLOGY_HELPER_H
#define PHANTORA_TOPOLOGY_HELPER_H

#include "ns3/cluster-topology.h"
#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief What is inside one server: its GPUs, how they reach each other, and their NICs.
 */
struct NodeSpec
{
    uint32_t gpus{8};
    /// "nvswitch": every GPU has one link (all its NVLinks together) to the node's
    /// NVSwitch; "pcie": GPUs talk through the node's PCIe switch.
    std::string intra{"nvswitch"};
    DataRate intraRate{"3600Gbps"}; ///< per GPU and direction (18 NVLink4 links x 25 GB/s)
    Time intraDelay{NanoSeconds(500)};
    DataRate pcieRate{"512Gbps"}; ///< GPU (or PCIe switch) to NIC, per direction
    Time pcieDelay{NanoSeconds(500)};
    uint32_t gpusPerNic{1}; ///< 1: one NIC per GPU (rail-optimised); 2: a NIC per GPU pair ...
};

/**
 * \ingroup phantora
 * \brief The network between servers: NICs, leaf (rail) switches and spines.
 *
 * Nodes are grouped into scalable units of \c nodesPerUnit.  Rail-optimised: within a
 * unit, NIC i of every node connects to leaf i of the unit, so rail-aligned GPU pairs
 * are one switch apart; other pairs cross a spine.  Each leaf has one link to each
 * spine, of (downlink capacity / oversubscription / spines).
 */
struct FabricSpec
{
    std::string kind{"ib"}; ///< channel type of fabric links: "ib" or "roce"
    DataRate nicRate{"400Gbps"};
    Time nicDelay{MicroSeconds(1)};
    uint32_t nodesPerUnit{0}; ///< 0: all nodes form one unit
    uint32_t spines{0};       ///< 0: as many as leaves per unit
    double oversubscription{1.0};
    Time spineDelay{MicroSeconds(1)};
};

/**
 * \ingroup phantora
 * \brief Builds common ClusterTopology graphs.
 *
 * GPUs are named "gpu<i>" and get GPU ids 0 .. n-1 in order.
 */
class PhantoraTopologyHelper
{
public:
    /**
     * \p nGpus GPUs, each with one link of \p rate and \p delay to one switch named
     * "switch": every GPU pair is two hops apart.
     */
    static Ptr<ClusterTopology> SingleSwitch(uint32_t nGpus, DataRate rate, Time delay,
                                             const std::string& kind = "nvlink");

    /**
     * \p nodes servers as \p node describes, joined by \p fabric (unused for one node).
     * GPU ids run node-major: GPU g of node n is n * node.gpus + g.  Names: "n<i>.gpu<g>",
     * "n<i>.nvswitch", "n<i>.pcie", "n<i>.nic<k>", "u<j>.leaf<k>", "spine<s>".
     * Throws std::invalid_argument naming the parameter that is out of range.
     */
    static Ptr<ClusterTopology> MultiNode(uint32_t nodes, const NodeSpec& node,
                                          const FabricSpec& fabric = FabricSpec{});

    /// Two GPUs joined by one link.
    static Ptr<ClusterTopology> DirectPair(DataRate rate, Time delay,
                                           const std::string& kind = "nvlink");
};

} // namespace ns3

#endif
