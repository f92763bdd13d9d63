#ifndef FLOW_TRANSPORT_HELPER_H
#define FLOW_TRANSPORT_HELPER_H

#include "ns3/cluster-topology.h"
#include "ns3/flow-transport.h"
#include "ns3/object-factory.h"
#include "ns3/ptr.h"

#include <string>

namespace ns3
{

class AttributeValue;

/**
 * \ingroup phantora
 * \brief Builds FlowTransports over a ClusterTopology, with the attributes set once here.
 */
class FlowTransportHelper
{
public:
    FlowTransportHelper();

    /// Sets attribute \p name (e.g. "Mtu", "HeaderBytes") of every transport installed later.
    void SetTransportAttribute(const std::string& name, const AttributeValue& value);

    /// A new flow-level transport over \p topology.
    Ptr<FlowTransport> Install(Ptr<ClusterTopology> topology) const;

private:
    ObjectFactory m_factory;
};

} // namespace ns3

#endif
