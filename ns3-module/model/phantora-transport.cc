#include "phantora-transport.h"

#include "ns3/log.h"

#include <stdexcept>

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

void PhantoraTransport::SendThroughSwitch(const std::vector<uint32_t>&,
                                          const std::vector<uint32_t>&, uint64_t, DeliveredCallback)
{
    throw std::logic_error(GetInstanceTypeId().GetName() +
                           " does not model the NVSwitch's reduction (NVLS): use the flow- or "
                           "packet-level transport or NCCL_NVLS_ENABLE=0");
}

} // namespace ns3
