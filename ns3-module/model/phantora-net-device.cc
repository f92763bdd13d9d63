#include "phantora-net-device.h"

#include "ns3/assert.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "phantora-channel.h"
#include "phantora-header.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

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
                          "Packets allowed to wait behind the one being serialized; more is an "
                          "error (std::runtime_error), as the fabric is lossless",
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
    m_pendingCredits.clear();
    m_creditWait.Cancel();
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
    if (m_channel)
    {
        throw std::logic_error("device " + GetName() + " is already attached to a channel");
    }
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

void PhantoraNetDevice::Enqueue(Ptr<const Packet> packet, PhantoraNetDevice* ingress)
{
    NS_LOG_FUNCTION(this << packet);
    NS_ASSERT_MSG(packet->GetSize() <= m_mtu, "device " << GetName() << ": packet of "
                                                        << packet->GetSize()
                                                        << " bytes exceeds the MTU of " << m_mtu);
    if (!m_transmitting && m_queue.empty() && !m_paused &&
        (!m_creditLimited || CreditsSuffice(packet->GetSize())))
    {
        StartTransmission(packet, ingress);
        return;
    }
    if (m_queue.size() >= m_maxQueuePackets)
    {
        std::ostringstream msg;
        msg << "device " << GetName()
            << ": transmit queue would exceed MaxQueuePackets=" << m_maxQueuePackets << " at "
            << Simulator::Now().As(Time::US)
            << "; the offered load outruns this port and no link-level flow control holds it "
               "back (raise MaxQueuePackets)";
        throw std::runtime_error(msg.str());
    }
    m_queue.push_back({packet, Simulator::Now(), ingress});
    m_queueBytes += packet->GetSize();
    m_maxQueueLength = std::max(m_maxQueueLength, m_queue.size());
    m_maxQueueBytes = std::max(m_maxQueueBytes, m_queueBytes);
    if (!m_transmitting && m_queue.size() == 1)
    {
        TryTransmit();
    }
}

bool PhantoraNetDevice::CreditsSuffice(uint32_t bytes)
{
    while (!m_pendingCredits.empty() && m_pendingCredits.front().first <= Simulator::Now())
    {
        m_credits += m_pendingCredits.front().second;
        m_pendingCredits.pop_front();
    }
    return m_credits >= bytes;
}

void PhantoraNetDevice::TryTransmit()
{
    if (m_transmitting || m_queue.empty() || m_paused)
    {
        return;
    }
    const uint32_t size = m_queue.front().packet->GetSize();
    if (m_creditLimited && !CreditsSuffice(size))
    {
        if (m_creditWait.IsRunning())
        {
            return;
        }
        // Wake when the credits already on their way suffice; if they never will, the
        // next ReturnCredits call comes back here.
        uint64_t credits = m_credits;
        for (const auto& [at, bytes] : m_pendingCredits)
        {
            credits += bytes;
            if (credits >= size)
            {
                ++m_creditStalls;
                m_creditWait = Simulator::Schedule(at - Simulator::Now(),
                                                   &PhantoraNetDevice::TryTransmit, this);
                return;
            }
        }
        return;
    }
    Queued next = std::move(m_queue.front());
    m_queue.pop_front();
    m_queueBytes -= size;
    const Time waited = Simulator::Now() - next.enqueued;
    m_totalQueueingDelay += waited;
    m_maxQueueingDelay = std::max(m_maxQueueingDelay, waited);
    StartTransmission(next.packet, next.ingress);
}

void PhantoraNetDevice::StartTransmission(Ptr<const Packet> packet, PhantoraNetDevice* ingress)
{
    NS_LOG_FUNCTION(this << packet);
    if (!m_channel)
    {
        throw std::logic_error("device " + GetName() + " is not attached to a channel");
    }
    m_transmitting = true;
    m_txIngress = ingress;
    const uint32_t size = packet->GetSize();
    m_txSize = size;
    if (m_creditLimited)
    {
        m_credits -= size;
    }
    if (m_ecn && m_queueBytes >= m_ecnKmin)
    {
        packet = MaybeMarkEcn(packet);
    }
    const Time txTime = TxTime(size);
    ++m_txPackets;
    m_txBytes += size;
    m_txBeginTrace(packet);
    Simulator::Schedule(txTime, &PhantoraNetDevice::TransmitComplete, this);
    m_channel->TransmitStart(packet, this, txTime);
}

Ptr<const Packet> PhantoraNetDevice::MaybeMarkEcn(Ptr<const Packet> packet)
{
    PhantoraHeader header;
    packet->PeekHeader(header);
    if (header.GetCe())
    {
        return packet;
    }
    if (m_queueBytes <= m_ecnKmax)
    {
        const double p = m_ecnKmax == m_ecnKmin ? m_ecnPmax
                                                : m_ecnPmax * (m_queueBytes - m_ecnKmin) /
                                                      static_cast<double>(m_ecnKmax - m_ecnKmin);
        // splitmix64's finalizer: a uniform draw that depends on the packet alone.
        uint64_t z = header.GetFlowId() * 0x9E3779B97F4A7C15ULL ^
                     (static_cast<uint64_t>(header.GetSeq()) << 20) ^ m_ecnSalt;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        if (static_cast<double>(z >> 11) * 0x1.0p-53 >= p)
        {
            return packet;
        }
    }
    ++m_ecnMarks;
    Ptr<Packet> marked = packet->Copy();
    marked->RemoveHeader(header);
    header.SetCe(true);
    marked->AddHeader(header);
    return marked;
}

void PhantoraNetDevice::TransmitComplete()
{
    NS_LOG_FUNCTION(this);
    m_transmitting = false;
    if (m_txIngress)
    {
        PhantoraNetDevice* ingress = m_txIngress;
        m_txIngress = nullptr;
        ingress->ReleaseIngress(m_txSize);
    }
    if (!m_queue.empty())
    {
        TryTransmit();
        return;
    }
    if (!m_txIdleCallback.IsNull())
    {
        m_txIdleCallback();
    }
}

void PhantoraNetDevice::SetIngressCredit(uint32_t bufferBytes)
{
    if (!m_channel)
    {
        throw std::logic_error("device " + GetName() + ": attach before configuring credits");
    }
    if (bufferBytes < m_mtu)
    {
        throw std::invalid_argument(
            "device " + GetName() + ": a credit buffer of " + std::to_string(bufferBytes) +
            " B cannot hold one MTU packet (" + std::to_string(m_mtu) + " B)");
    }
    m_ingressMode = IngressMode::Credit;
    m_ingressBuffer = bufferBytes;
    Ptr<PhantoraNetDevice> peer = m_channel->GetPeer(this);
    m_creditPeer = PeekPointer(peer);
    m_creditDelay = m_channel->GetDelay();
    peer->m_creditLimited = true;
    peer->m_credits = bufferBytes;
}

void PhantoraNetDevice::SetIngressPfc(uint32_t xoff, uint32_t xon, uint32_t headroom)
{
    if (xon > xoff)
    {
        throw std::invalid_argument("device " + GetName() + ": PFC XON (" + std::to_string(xon) +
                                    " B) must not exceed XOFF (" + std::to_string(xoff) + " B)");
    }
    m_ingressMode = IngressMode::Pfc;
    m_ingressBuffer = xoff;
    m_pfcXon = xon;
    m_pfcHeadroom = headroom;
}

void PhantoraNetDevice::SetEcnMarking(uint32_t kmin, uint32_t kmax, double pmax, uint64_t salt)
{
    if (kmin > kmax)
    {
        throw std::invalid_argument("device " + GetName() + ": ECN Kmin (" + std::to_string(kmin) +
                                    " B) must not exceed Kmax (" + std::to_string(kmax) + " B)");
    }
    m_ecnKmin = kmin;
    m_ecnKmax = kmax;
    m_ecnPmax = pmax;
    m_ecn = true;
    m_ecnSalt = salt * 0xD1B54A32D192ED03ULL;
}

uint64_t PhantoraNetDevice::GetIngressBufferBytes() const
{
    switch (m_ingressMode)
    {
    case IngressMode::Credit:
        return m_ingressBuffer;
    case IngressMode::Pfc:
        return static_cast<uint64_t>(m_ingressBuffer) + m_pfcHeadroom;
    default:
        return 0;
    }
}

Time PhantoraNetDevice::GetPausedTime() const
{
    return m_pausedTotal + (m_paused ? Simulator::Now() - m_pausedSince : Time(0));
}

void PhantoraNetDevice::ReleaseIngress(uint32_t bytes)
{
    NS_ASSERT(m_ingressBytes >= bytes);
    m_ingressBytes -= bytes;
    if (m_ingressMode == IngressMode::Credit)
    {
        // Once per packet and hop: no reference counting on this path.
        PhantoraNetDevice* peer = m_creditPeer;
        peer->ReturnCredits(bytes, Simulator::Now() + m_creditDelay);
    }
    else if (m_ingressMode == IngressMode::Pfc && m_pauseSent && m_ingressBytes <= m_pfcXon)
    {
        m_pauseSent = false;
        ++m_resumeFramesSent;
        Simulator::Schedule(m_channel->GetDelay(), &PhantoraNetDevice::SetPaused,
                            m_channel->GetPeer(this), false);
    }
}

void PhantoraNetDevice::SetPaused(bool paused)
{
    NS_LOG_FUNCTION(this << paused);
    if (paused == m_paused)
    {
        return;
    }
    m_paused = paused;
    if (paused)
    {
        m_pausedSince = Simulator::Now();
        return;
    }
    m_pausedTotal += Simulator::Now() - m_pausedSince;
    TryTransmit();
}

void PhantoraNetDevice::ReturnCredits(uint32_t bytes, Time at)
{
    m_pendingCredits.emplace_back(at, bytes);
    if (!m_transmitting && !m_queue.empty() && !m_creditWait.IsRunning())
    {
        TryTransmit();
    }
}

void PhantoraNetDevice::Receive(Ptr<const Packet> packet)
{
    NS_LOG_FUNCTION(this << packet);
    ++m_rxPackets;
    const uint32_t size = packet->GetSize();
    m_rxBytes += size;
    if (m_ingressMode != IngressMode::None)
    {
        m_ingressBytes += size;
        m_maxIngressBytes = std::max(m_maxIngressBytes, m_ingressBytes);
        if (m_ingressMode == IngressMode::Credit)
        {
            NS_ASSERT_MSG(m_ingressBytes <= m_ingressBuffer,
                          "device " << GetName() << ": " << m_ingressBytes
                                    << " B buffered exceed the credit buffer of " << m_ingressBuffer
                                    << " B (credit accounting broken)");
        }
        else
        {
            if (!m_pauseSent && m_ingressBytes >= m_ingressBuffer)
            {
                m_pauseSent = true;
                ++m_pauseFramesSent;
                Simulator::Schedule(m_channel->GetDelay(), &PhantoraNetDevice::SetPaused,
                                    m_channel->GetPeer(this), true);
            }
            if (m_ingressBytes > static_cast<uint64_t>(m_ingressBuffer) + m_pfcHeadroom)
            {
                throw std::runtime_error(
                    "device " + GetName() + ": " + std::to_string(m_ingressBytes) +
                    " B buffered exceed PFC XOFF " + std::to_string(m_ingressBuffer) +
                    " B + headroom " + std::to_string(m_pfcHeadroom) +
                    " B: the lossless fabric would drop; raise the headroom "
                    "(PacketTransport::PfcHeadroomBytes)");
            }
        }
    }
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
