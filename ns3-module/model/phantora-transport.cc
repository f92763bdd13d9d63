#include "phantora-transport.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PhantoraTransport");
NS_OBJECT_ENSURE_REGISTERED(PhantoraTransport);

TypeId PhantoraTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PhantoraTransport").SetParent<Object>().SetGroupName("Phantora");
    return tid;
}

PhantoraTransport::~PhantoraTransport() = default;

} // namespace ns3
