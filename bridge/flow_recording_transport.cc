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

PairActivity& FlowRecordingTransport::Record(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes)
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
    return a;
}

void FlowRecordingTransport::SendThroughSwitch(const std::vector<uint32_t>& srcGpus,
                                               const std::vector<uint32_t>& dstGpus, uint64_t bytes,
                                               DeliveredCallback onDelivered)
{
    std::vector<PairActivity*> records;
    for (uint32_t s : srcGpus)
    {
        for (uint32_t d : dstGpus)
        {
            if (s != d)
            {
                records.push_back(&Record(s, d, bytes));
            }
        }
    }
    // std::map nodes stay put, so the pointers outlive later insertions.
    m_target->SendThroughSwitch(
        srcGpus, dstGpus, bytes,
        [records = std::move(records), onDelivered = std::move(onDelivered)]()
        {
            const int64_t now = ns3::Simulator::Now().GetPicoSeconds();
            for (PairActivity* a : records)
            {
                a->lastDeliveryPs = now;
            }
            if (onDelivered)
            {
                onDelivered();
            }
        });
}

void FlowRecordingTransport::Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
                                  DeliveredCallback onDelivered)
{
    PairActivity& a = Record(srcGpu, dstGpu, bytes);
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
