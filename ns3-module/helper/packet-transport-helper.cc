#include "packet-transport-helper.h"

namespace ns3
{

PacketTransportHelper::PacketTransportHelper()
{
    m_factory.SetTypeId(PacketTransport::GetTypeId());
}

void PacketTransportHelper::SetTransportAttribute(const std::string& name,
                                                  const AttributeValue& value)
{
    m_factory.Set(name, value);
}

Ptr<PacketTransport> PacketTransportHelper::Install(Ptr<ClusterTopology> topology) const
{
    Ptr<PacketTransport> transport = m_factory.Create<PacketTransport>();
    transport->Setup(topology);
    return transport;
}

} // namespace ns3
