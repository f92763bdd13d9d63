#include "flow_recording_transport.h"

#include "ns3/simulator.h"

namespace phantora
{

ns3::TypeId FlowRecordingTransport::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("phantora::FlowRecordingTransport")
                                 .SetParent<ns3::PhantoraTransport>()
                                 .SetGroupName("Phantora")
                                 .AddConstructor<FlowRecordingTransport>();
    return tid;
}

void FlowRecordingTransport::Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
                                  DeliveredCallback onDelivered)
{
    const int64_t now = ns3::Simulator::Now().GetPicoSeconds();
    auto [it, fresh] = m_pairs.try_emplace({srcGpu, dstGpu});
    PairActivity& a = it->second;
    if (fresh)
    {
        a.firstSendPs = now;
    }
    a.bytes += bytes;
    ++a.transfers;
    m_target->Send(srcGpu, dstGpu, bytes,
                   [&a, onDelivered = std::move(onDelivered)]()
                   {
                       a.lastDeliveryPs = ns3::Simulator::Now().GetPicoSeconds();
                       if (onDelivered)
                       {
                           onDelivered();
                       }
                   });
}

void FlowRecordingTransport::DoDispose()
{
    m_target = nullptr;
    ns3::PhantoraTransport::DoDispose();
}

} // namespace phantora
