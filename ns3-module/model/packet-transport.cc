#include "packet-transport.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/mac48-address.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "phantora-channel.h"
#include "phantora-header.h"
#include "phantora-net-device.h"
#include "phantora-switch.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PacketTransport");
NS_OBJECT_ENSURE_REGISTERED(PacketTransport);

namespace
{
constexpr uint32_t NO_EGRESS = std::numeric_limits<uint32_t>::max();
} // namespace

TypeId PacketTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PacketTransport")
            .SetParent<PhantoraTransport>()
            .SetGroupName("Phantora")
            .AddConstructor<PacketTransport>()
            .AddAttribute("Mtu", "Largest packet on the wire, header included (bytes)",
                          UintegerValue(4096), MakeUintegerAccessor(&PacketTransport::m_mtu),
                          MakeUintegerChecker<uint16_t>(PhantoraHeader::FIELD_BYTES + 1))
            .AddAttribute("HeaderBytes",
                          "Per-packet wire overhead: the PhantoraHeader is padded to this size",
                          UintegerValue(48), MakeUintegerAccessor(&PacketTransport::m_headerBytes),
                          MakeUintegerChecker<uint16_t>(PhantoraHeader::FIELD_BYTES))
            .AddAttribute("SwitchLatency",
                          "Time a switch takes from full reception of a packet to its "
                          "enqueueing on the output port",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&PacketTransport::m_switchLatency),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("MaxQueuePackets",
                          "Per-device limit on waiting packets; exceeding it is a fatal error "
                          "(the fabric is lossless and has no flow control yet)",
                          UintegerValue(1000000),
                          MakeUintegerAccessor(&PacketTransport::m_maxQueuePackets),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

PacketTransport::PacketTransport()
{
    NS_LOG_FUNCTION(this);
}

PacketTransport::~PacketTransport()
{
    NS_LOG_FUNCTION(this);
}

void PacketTransport::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // Nodes outlive us in the NodeList; leave them nothing that points back here.
    for (Egress& e : m_egress)
    {
        e.device->SetTxIdleCallback(MakeNullCallback<void>());
    }
    if (m_topology)
    {
        for (uint32_t g = 0; g < m_topology->GetNGpus(); ++g)
        {
            m_nodes[m_topology->GetGpuNode(g)]->UnregisterProtocolHandler(
                MakeCallback(&PacketTransport::ReceiveAtGpu, this));
        }
    }
    m_egress.clear();
    m_flows.clear();
    m_linkDevices.clear();
    m_nodes.clear();
    m_topology = nullptr;
    PhantoraTransport::DoDispose();
}

void PacketTransport::Setup(Ptr<ClusterTopology> topology)
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_topology, "PacketTransport::Setup called twice");
    NS_ABORT_MSG_IF(!topology, "PacketTransport::Setup needs a topology");
    if (m_mtu <= m_headerBytes)
    {
        throw std::invalid_argument("PacketTransport: Mtu (" + std::to_string(m_mtu) +
                                    " B) must exceed HeaderBytes (" +
                                    std::to_string(m_headerBytes) + " B)");
    }
    // Throws if HeaderBytes cannot hold the header's fields.
    [[maybe_unused]] const PhantoraHeader sizeCheck(m_headerBytes);
    topology->CheckConnected();
    m_topology = topology;

    const uint32_t nNodes = topology->GetNNodes();
    m_nodes.reserve(nNodes);
    for (uint32_t i = 0; i < nNodes; ++i)
    {
        m_nodes.push_back(CreateObject<Node>());
    }

    std::vector<Ptr<PhantoraSwitch>> switches(nNodes);
    for (uint32_t i = 0; i < nNodes; ++i)
    {
        if (topology->GetNode(i).kind == ClusterTopology::NodeKind::Gpu)
        {
            continue;
        }
        Ptr<PhantoraSwitch> sw = CreateObject<PhantoraSwitch>();
        sw->SetAttribute("Latency", TimeValue(m_switchLatency));
        sw->Setup(topology, i);
        m_nodes[i]->AggregateObject(sw);
        switches[i] = sw;
    }

    const uint32_t nLinks = topology->GetNLinks();
    m_linkDevices.resize(2 * nLinks);
    m_egressOfDevice.assign(2 * nLinks, NO_EGRESS);
    for (uint32_t l = 0; l < nLinks; ++l)
    {
        const ClusterTopology::Link& link = topology->GetLink(l);
        Ptr<PhantoraChannel> channel = CreateObject<PhantoraChannel>();
        channel->SetAttribute("Delay", TimeValue(link.delay));
        channel->SetAttribute("Kind", StringValue(link.kind));
        const uint32_t ends[2] = {link.a, link.b};
        for (uint32_t side = 0; side < 2; ++side)
        {
            const uint32_t node = ends[side];
            const uint32_t peer = ends[1 - side];
            Ptr<PhantoraNetDevice> dev = CreateObject<PhantoraNetDevice>();
            dev->SetDataRate(link.rate);
            dev->SetMtu(m_mtu);
            dev->SetAttribute("MaxQueuePackets", UintegerValue(m_maxQueuePackets));
            dev->SetAddress(Mac48Address::Allocate());
            dev->SetName(topology->GetNode(node).name + "->" + topology->GetNode(peer).name + " (" +
                         link.kind + " link " + std::to_string(l) + ")");
            m_nodes[node]->AddDevice(dev);
            dev->Attach(channel);
            m_linkDevices[2 * l + side] = dev;
            if (switches[node])
            {
                switches[node]->AddPort(l, dev);
            }
            else
            {
                const auto egress = static_cast<uint32_t>(m_egress.size());
                m_egress.push_back({dev, {}, nullptr});
                m_egressOfDevice[2 * l + side] = egress;
                dev->SetTxIdleCallback(MakeCallback(&PacketTransport::FeedEgress, this, egress));
            }
        }
    }

    for (uint32_t i = 0; i < nNodes; ++i)
    {
        if (switches[i])
        {
            m_nodes[i]->RegisterProtocolHandler(MakeCallback(&PhantoraSwitch::Receive, switches[i]),
                                                PhantoraNetDevice::PROT_NUMBER, nullptr);
        }
        else
        {
            m_nodes[i]->RegisterProtocolHandler(MakeCallback(&PacketTransport::ReceiveAtGpu, this),
                                                PhantoraNetDevice::PROT_NUMBER, nullptr);
        }
    }
}

uint32_t PacketTransport::GetNGpus() const
{
    return m_topology ? m_topology->GetNGpus() : 0;
}

Ptr<Node> PacketTransport::GetNode(uint32_t topologyNode) const
{
    return m_nodes.at(topologyNode);
}

Ptr<PhantoraNetDevice> PacketTransport::GetDevice(uint32_t link, bool atB) const
{
    return m_linkDevices.at(2 * static_cast<std::size_t>(link) + (atB ? 1 : 0));
}

uint64_t PacketTransport::GetPacketTransmissions() const
{
    uint64_t n = 0;
    for (const Ptr<PhantoraNetDevice>& dev : m_linkDevices)
    {
        n += dev->GetTxPackets();
    }
    return n;
}

void PacketTransport::Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
                           DeliveredCallback onDelivered)
{
    NS_LOG_FUNCTION(this << srcGpu << dstGpu << bytes);
    NS_ABORT_MSG_IF(!m_topology, "PacketTransport::Send before Setup");
    if (srcGpu >= GetNGpus() || dstGpu >= GetNGpus())
    {
        throw std::out_of_range("PacketTransport::Send: GPU " +
                                std::to_string(srcGpu >= GetNGpus() ? srcGpu : dstGpu) +
                                " does not exist (" + std::to_string(GetNGpus()) + " GPUs)");
    }
    const uint64_t id = m_nextFlowId++;
    ++m_flowsStarted;
    if (srcGpu == dstGpu)
    {
        // Nothing crosses the network; still deliver from the event loop, never re-entrantly.
        ++m_flowsCompleted;
        Simulator::ScheduleNow(
            [cb = std::move(onDelivered)]()
            {
                if (cb)
                {
                    cb();
                }
            });
        return;
    }

    const uint32_t srcNode = m_topology->GetGpuNode(srcGpu);
    const std::vector<ClusterTopology::Hop>& hops = m_topology->NextHops(srcNode, dstGpu);
    const ClusterTopology::Hop& hop =
        hops[PhantoraSwitch::EcmpIndex(id, srcNode, static_cast<uint32_t>(hops.size()))];
    const uint32_t egress =
        m_egressOfDevice[2 * static_cast<std::size_t>(hop.link) + (hop.forward ? 0 : 1)];
    NS_ASSERT(egress != NO_EGRESS);

    const uint64_t payload = GetPayloadBytes();
    const uint64_t packets = bytes == 0 ? 1 : (bytes + payload - 1) / payload;
    Flow& flow = m_flows[id];
    flow = Flow{srcGpu, dstGpu, bytes, packets, packets, 0, id, std::move(onDelivered)};

    Egress& e = m_egress[egress];
    e.active.push_back(&flow);
    if (e.device->IsIdle())
    {
        FeedEgress(egress);
    }
}

void PacketTransport::FeedEgress(uint32_t egress)
{
    Egress& e = m_egress[egress];
    if (e.lastServed)
    {
        // Rejoining only now puts flows that arrived since its turn ahead of it.
        e.active.push_back(e.lastServed);
        e.lastServed = nullptr;
    }
    if (e.active.empty())
    {
        return;
    }
    Flow& flow = *e.active.front();
    e.active.pop_front();

    const uint32_t payload =
        static_cast<uint32_t>(std::min<uint64_t>(GetPayloadBytes(), flow.bytesToSend));
    flow.bytesToSend -= payload;
    if (--flow.packetsToSend > 0)
    {
        e.lastServed = &flow;
    }

    PhantoraHeader header(m_headerBytes);
    header.SetFlowId(flow.id);
    header.SetSrcGpu(flow.srcGpu);
    header.SetDstGpu(flow.dstGpu);
    header.SetPayloadBytes(payload);
    // A zero-filled virtual payload: the size is all the model needs, and no bytes are copied.
    Ptr<Packet> packet = Create<Packet>(payload);
    packet->AddHeader(header);
    ++m_packetsSent;
    NS_LOG_LOGIC("gpu" << flow.srcGpu << " sends " << header);
    e.device->Enqueue(packet);
}

void PacketTransport::ReceiveAtGpu(Ptr<NetDevice>, Ptr<const Packet> packet, uint16_t,
                                   const Address&, const Address&, NetDevice::PacketType)
{
    PhantoraHeader header;
    packet->PeekHeader(header);
    NS_LOG_LOGIC("gpu" << header.GetDstGpu() << " receives " << header);
    auto it = m_flows.find(header.GetFlowId());
    NS_ABORT_MSG_IF(it == m_flows.end(), "packet of unknown flow " << header.GetFlowId()
                                                                   << " at gpu"
                                                                   << header.GetDstGpu());
    Flow& flow = it->second;
    ++m_packetsDelivered;
    m_bytesDelivered += header.GetPayloadBytes();
    if (++flow.packetsDelivered < flow.packetsTotal)
    {
        return;
    }
    DeliveredCallback cb = std::move(flow.onDelivered);
    m_flows.erase(it);
    ++m_flowsCompleted;
    if (cb)
    {
        cb();
    }
}

} // namespace ns3
