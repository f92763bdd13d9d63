#include "phantora-channel.h"

#include "ns3/assert.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "phantora-net-device.h"

#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PhantoraChannel");
NS_OBJECT_ENSURE_REGISTERED(PhantoraChannel);

TypeId PhantoraChannel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PhantoraChannel")
            .SetParent<Channel>()
            .SetGroupName("Phantora")
            .AddConstructor<PhantoraChannel>()
            .AddAttribute("Delay", "Propagation delay of the link, the same in both directions",
                          TimeValue(Seconds(0)), MakeTimeAccessor(&PhantoraChannel::m_delay),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("Kind", "Link type: nvlink, pcie, ib, roce or ethernet",
                          StringValue("ethernet"), MakeStringAccessor(&PhantoraChannel::m_kind),
                          MakeStringChecker());
    return tid;
}

PhantoraChannel::PhantoraChannel()
{
    NS_LOG_FUNCTION(this);
}

void PhantoraChannel::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_devices[0] = nullptr;
    m_devices[1] = nullptr;
    m_nDevices = 0;
    Channel::DoDispose();
}

void PhantoraChannel::Attach(Ptr<PhantoraNetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    if (m_nDevices >= 2)
    {
        throw std::logic_error("PhantoraChannel " + std::to_string(GetId()) + " (" + m_kind +
                               ") already connects two devices");
    }
    m_devices[m_nDevices++] = device;
}

void PhantoraChannel::TransmitStart(Ptr<const Packet> packet, const PhantoraNetDevice* src,
                                    Time txTime)
{
    NS_LOG_FUNCTION(this << packet << src << txTime);
    NS_ASSERT_MSG(m_nDevices == 2, "PhantoraChannel " << GetId() << " is not connected");
    const Ptr<PhantoraNetDevice>& dst =
        PeekPointer(m_devices[0]) == src ? m_devices[1] : m_devices[0];
    // The event runs in the receiving node's context, as ns-3 requires across nodes.
    Simulator::ScheduleWithContext(dst->GetNode()->GetId(), txTime + m_delay,
                                   &PhantoraNetDevice::Receive, dst, packet);
}

Ptr<PhantoraNetDevice> PhantoraChannel::GetPeer(const PhantoraNetDevice* device) const
{
    if (m_nDevices != 2)
    {
        throw std::logic_error("PhantoraChannel " + std::to_string(GetId()) + " is not connected");
    }
    return PeekPointer(m_devices[0]) == device ? m_devices[1] : m_devices[0];
}

std::size_t PhantoraChannel::GetNDevices() const
{
    return m_nDevices;
}

Ptr<NetDevice> PhantoraChannel::GetDevice(std::size_t i) const
{
    return GetPhantoraDevice(i);
}

Ptr<PhantoraNetDevice> PhantoraChannel::GetPhantoraDevice(std::size_t i) const
{
    if (i >= m_nDevices)
    {
        throw std::out_of_range("PhantoraChannel " + std::to_string(GetId()) + " has no device " +
                                std::to_string(i));
    }
    return m_devices[i];
}

} // namespace ns3
