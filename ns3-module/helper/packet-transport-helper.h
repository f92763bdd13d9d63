#ifndef PACKET_TRANSPORT_HELPER_H
#define PACKET_TRANSPORT_HELPER_H

#include "ns3/attribute.h"
#include "ns3/cluster-topology.h"
#include "ns3/object-factory.h"
#include "ns3/packet-transport.h"
#include "ns3/ptr.h"

#include <string>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief Creates a PacketTransport with the attributes set here and builds its network
 * from a ClusterTopology.
 *
 * The network: one ns3::Node per topology node; on every non-GPU node a PhantoraSwitch,
 * aggregated to the node and registered as its protocol handler; per topology link a
 * PhantoraChannel joining two PhantoraNetDevices at the link's rate, their link layer
 * (credits, PFC, ECN) configured by the link's kind and the transport's attributes.  The
 * transport is then attached to it (PacketTransport::Attach).
 */
class PacketTransportHelper
{
public:
    PacketTransportHelper();

    /// Sets attribute \p name (e.g. "Mtu", "HeaderBytes") of the transports installed later.
    void SetTransportAttribute(const std::string& name, const AttributeValue& value);

    /**
     * The transport over \p topology.  Throws std::runtime_error when some GPU cannot
     * reach another, std::invalid_argument when the attributes are inconsistent.
     */
    Ptr<PacketTransport> Install(Ptr<ClusterTopology> topology) const;

private:
    ObjectFactory m_factory;
};

} // namespace ns3

#endif
