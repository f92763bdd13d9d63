#include "phantora-net-device.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "phantora-channel.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PhantoraNetDevice");
NS_OBJECT_ENSURE_REGISTERED(PhantoraNetDevice);

TypeId PhantoraNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PhantoraNetDevice")
            .SetParent<NetDevice>()
            .SetGroupName("Phantora")
            .AddConstructor<PhantoraNetDevice>()
            .AddAttribute("DataRate", "Serialization rate of the transmit direction",
                          DataRateValue(DataRate("100Gbps")),
                          MakeDataRateAccessor(&PhantoraNetDevice::SetDataRate,
                                               &PhantoraNetDevice::GetDataRate),
                          MakeDataRateChecker())
            .AddAttribute(
                "Mtu", "Largest packet, header included, the device accepts", UintegerValue(4096),
                MakeUintegerAccessor(&PhantoraNetDevice::SetMtu, &PhantoraNetDevice::GetMtu),
                MakeUintegerChecker<uint16_t>())
            .AddAttribute("MaxQueuePackets",
                          "Packets allowed to wait behind the one being serialized; more is a "
                          "fatal error, as the fabric is lossless and has no flow control yet",
                          UintegerValue(1000000),
                          MakeUintegerAccessor(&PhantoraNetDevice::m_maxQueuePackets),
                          MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("TxBegin", "A packet starts being serialized",
                            MakeTraceSourceAccessor(&PhantoraNetDevice::m_txBeginTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("Rx", "A packet has been fully received",
                            MakeTraceSourceAccessor(&PhantoraNetDevice::m_rxTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

PhantoraNetDevice::PhantoraNetDevice()
{
    NS_LOG_FUNCTION(this);
}

PhantoraNetDevice::~PhantoraNetDevice()
{
    NS_LOG_FUNCTION(this);
}

void PhantoraNetDevice::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_node = nullptr;
    m_channel = nullptr;
    m_queue.clear();
    m_rxCallback =
        MakeNullCallback<bool, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&>();
    m_promiscRxCallback = MakeNullCallback<bool, Ptr<NetDevice>, Ptr<const Packet>, uint16_t,
                                           const Address&, const Address&, NetDevice::PacketType>();
    m_txIdleCallback = MakeNullCallback<void>();
    NetDevice::DoDispose();
}

void PhantoraNetDevice::Attach(Ptr<PhantoraChannel> channel)
{
    NS_LOG_FUNCTION(this << channel);
    NS_ABORT_MSG_IF(m_channel, "device " << GetName() << " is already attached to a channel");
    m_channel = channel;
    m_channel->Attach(this);
    m_linkChangeCallbacks();
}

Ptr<PhantoraChannel> PhantoraNetDevice::GetPhantoraChannel() const
{
    return m_channel;
}

void PhantoraNetDevice::SetDataRate(DataRate rate)
{
    m_rate = rate;
    m_cachedTxBytes = 0;
    m_cachedTxTime = Time(0);
}

std::string PhantoraNetDevice::GetName() const
{
    if (!m_name.empty())
    {
        return m_name;
    }
    std::ostringstream os;
    os << "node " << (m_node ? m_node->GetId() : 0xffffffffU) << " interface " << m_ifIndex;
    return os.str();
}

void PhantoraNetDevice::SetTxIdleCallback(Callback<void> cb)
{
    m_txIdleCallback = cb;
}

Time PhantoraNetDevice::TxTime(uint32_t bytes)
{
    if (bytes != m_cachedTxBytes)
    {
        m_cachedTxBytes = bytes;
        m_cachedTxTime = m_rate.CalculateBytesTxTime(bytes);
    }
    return m_cachedTxTime;
}

void PhantoraNetDevice::Enqueue(Ptr<const Packet> packet)
{
    NS_LOG_FUNCTION(this << packet);
    NS_ASSERT_MSG(packet->GetSize() <= m_mtu, "device " << GetName() << ": packet of "
                                                        << packet->GetSize()
                                                        << " bytes exceeds the MTU of " << m_mtu);
    if (!m_transmitting)
    {
        NS_ASSERT(m_queue.empty());
        StartTransmission(packet);
        return;
    }
    if (m_queue.size() >= m_maxQueuePackets)
    {
        NS_FATAL_ERROR("device " << GetName() << ": transmit queue would exceed MaxQueuePackets="
                                 << m_maxQueuePackets << " at " << Simulator::Now().As(Time::US)
                                 << "; the lossless fabric has no flow control yet, so the "
                                    "offered load outruns this port (raise MaxQueuePackets)");
    }
    m_queue.push_back({packet, Simulator::Now()});
    if (m_queue.size() > m_maxQueueLength)
    {
        m_maxQueueLength = m_queue.size();
    }
}

void PhantoraNetDevice::StartTransmission(Ptr<const Packet> packet)
{
    NS_LOG_FUNCTION(this << packet);
    NS_ABORT_MSG_IF(!m_channel, "device " << GetName() << " is not attached to a channel");
    m_transmitting = true;
    const uint32_t size = packet->GetSize();
    const Time txTime = TxTime(size);
    ++m_txPackets;
    m_txBytes += size;
    m_txBeginTrace(packet);
    Simulator::Schedule(txTime, &PhantoraNetDevice::TransmitComplete, this);
    m_channel->TransmitStart(packet, this, txTime);
}

void PhantoraNetDevice::TransmitComplete()
{
    NS_LOG_FUNCTION(this);
    m_transmitting = false;
    if (!m_queue.empty())
    {
        Queued next = std::move(m_queue.front());
        m_queue.pop_front();
        const Time waited = Simulator::Now() - next.enqueued;
        m_totalQueueingDelay += waited;
        if (waited > m_maxQueueingDelay)
        {
            m_maxQueueingDelay = waited;
        }
        StartTransmission(next.packet);
        return;
    }
    if (!m_txIdleCallback.IsNull())
    {
        m_txIdleCallback();
    }
}

void PhantoraNetDevice::Receive(Ptr<const Packet> packet)
{
    NS_LOG_FUNCTION(this << packet);
    ++m_rxPackets;
    m_rxBytes += packet->GetSize();
    m_rxTrace(packet);
    if (m_peerAddress.IsInvalid())
    {
        m_peerAddress = m_channel->GetPeer(this)->GetAddress();
    }
    if (!m_promiscRxCallback.IsNull())
    {
        m_promiscRxCallback(this, packet, PROT_NUMBER, m_peerAddress, GetAddress(),
                            NetDevice::PACKET_HOST);
    }
    m_rxCallback(this, packet, PROT_NUMBER, m_peerAddress);
}

void PhantoraNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t PhantoraNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel> PhantoraNetDevice::GetChannel() const
{
    return m_channel;
}

void PhantoraNetDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address PhantoraNetDevice::GetAddress() const
{
    return m_address;
}

bool PhantoraNetDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

uint16_t PhantoraNetDevice::GetMtu() const
{
    return m_mtu;
}

bool PhantoraNetDevice::IsLinkUp() const
{
    return m_channel != nullptr;
}

void PhantoraNetDevice::AddLinkChangeCallback(Callback<void> callback)
{
    m_linkChangeCallbacks.ConnectWithoutContext(callback);
}

bool PhantoraNetDevice::IsBroadcast() const
{
    // A point-to-point link: whatever is sent reaches the one peer.
    return true;
}

Address PhantoraNetDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool PhantoraNetDevice::IsMulticast() const
{
    return false;
}

Address PhantoraNetDevice::GetMulticast(Ipv4Address) const
{
    return Mac48Address::GetBroadcast();
}

Address PhantoraNetDevice::GetMulticast(Ipv6Address) const
{
    return Mac48Address::GetBroadcast();
}

bool PhantoraNetDevice::IsBridge() const
{
    return false;
}

bool PhantoraNetDevice::IsPointToPoint() const
{
    return true;
}

bool PhantoraNetDevice::Send(Ptr<Packet> packet, const Address&, uint16_t protocolNumber)
{
    NS_LOG_FUNCTION(this << packet << protocolNumber);
    // Frames carry no protocol field, so the receiver could not tell another protocol apart.
    if (protocolNumber != PROT_NUMBER)
    {
        NS_LOG_WARN("device " << GetName() << " carries only protocol " << PROT_NUMBER);
        return false;
    }
    Enqueue(packet);
    return true;
}

bool PhantoraNetDevice::SendFrom(Ptr<Packet> packet, const Address&, const Address& dest,
                                 uint16_t protocolNumber)
{
    return Send(packet, dest, protocolNumber);
}

Ptr<Node> PhantoraNetDevice::GetNode() const
{
    return m_node;
}

void PhantoraNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool PhantoraNetDevice::NeedsArp() const
{
    return false;
}

void PhantoraNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_rxCallback = cb;
}

void PhantoraNetDevice::SetPromiscReceiveCallback(NetDevice::PromiscReceiveCallback cb)
{
    m_promiscRxCallback = cb;
}

bool PhantoraNetDevice::SupportsSendFrom() const
{
    return false;
}

} // namespace ns3
