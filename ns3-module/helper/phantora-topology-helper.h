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

    /// Two GPUs joined by one link.
    static Ptr<ClusterTopology> DirectPair(DataRate rate, Time delay,
                                           const std::string& kind = "nvlink");
};

} // namespace ns3

#endif
