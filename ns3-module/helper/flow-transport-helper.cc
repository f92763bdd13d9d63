#include "flow-transport-helper.h"

#include <stdexcept>

namespace ns3
{

FlowTransportHelper::FlowTransportHelper()
{
    m_factory.SetTypeId(FlowTransport::GetTypeId());
}

void FlowTransportHelper::SetTransportAttribute(const std::string& name,
                                                const AttributeValue& value)
{
    m_factory.Set(name, value);
}

Ptr<FlowTransport> FlowTransportHelper::Install(Ptr<ClusterTopology> topology) const
{
    if (!topology)
    {
        throw std::invalid_argument("FlowTransportHelper::Install: no topology");
    }
    Ptr<FlowTransport> transport = m_factory.Create<FlowTransport>();
    transport->SetTopology(topology);
    return transport;
}

} // namespace ns3
