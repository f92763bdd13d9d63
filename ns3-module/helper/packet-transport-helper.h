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
