#include "packet-transport.h"

#include "ns3/assert.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "phantora-header.h"
#include "phantora-net-device.h"
#include "phantora-switch.h"

#include <algorithm>
#include <cmath>
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
/// Ids of SendThroughSwitch's flows: apart from Send's.
constexpr uint64_t SWITCH_ID_BIT = uint64_t{1} << 63;
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
                          "Per-device limit on waiting packets; exceeding it ends the run with "
                          "an error naming the device (the fabric is lossless)",
                          UintegerValue(1000000),
                          MakeUintegerAccessor(&PacketTransport::m_maxQueuePackets),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("NvlinkBufferBytes",
                          "Receive buffer (credits) per NVLink ingress port; 0: the link's "
                          "round trip at line rate plus 4 MTU, so credits never idle the link",
                          UintegerValue(0), MakeUintegerAccessor(&PacketTransport::m_nvlinkBuffer),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("PcieBufferBytes",
                          "Receive buffer (credits) per PCIe ingress port; 0: automatic, as "
                          "NvlinkBufferBytes",
                          UintegerValue(0), MakeUintegerAccessor(&PacketTransport::m_pcieBuffer),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("IbBufferBytes",
                          "Receive buffer (credits) per InfiniBand ingress port and VL; 0: "
                          "automatic, as NvlinkBufferBytes (the IB credit loop is sized so)",
                          UintegerValue(0), MakeUintegerAccessor(&PacketTransport::m_ibBuffer),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("PfcXoffBytes",
                          "RoCE/Ethernet ingress occupancy that sends PAUSE upstream (above "
                          "EcnKmaxBytes, so that ECN acts before PFC, as DCQCN requires)",
                          UintegerValue(512 * 1024),
                          MakeUintegerAccessor(&PacketTransport::m_pfcXoff),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("PfcXonBytes", "Ingress occupancy that sends RESUME; 0: XOFF - 2 MTU",
                          UintegerValue(0), MakeUintegerAccessor(&PacketTransport::m_pfcXon),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("PfcHeadroomBytes",
                          "Buffer above XOFF for what arrives before PAUSE takes effect; 0: "
                          "2 x rate x delay + 3 MTU (round trip in flight, a frame being sent at "
                          "each end and the one that crossed XOFF)",
                          UintegerValue(0), MakeUintegerAccessor(&PacketTransport::m_pfcHeadroom),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnKminBytes",
                          "RoCE switch egress queue below which nothing is marked (DCQCN paper: "
                          "5 KB)",
                          UintegerValue(5 * 1000),
                          MakeUintegerAccessor(&PacketTransport::m_ecnKmin),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnKmaxBytes",
                          "Egress queue above which every packet is marked (DCQCN paper: 200 KB)",
                          UintegerValue(200 * 1000),
                          MakeUintegerAccessor(&PacketTransport::m_ecnKmax),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnPmax", "Marking probability at EcnKmaxBytes (DCQCN paper: 1%)",
                          DoubleValue(0.01), MakeDoubleAccessor(&PacketTransport::m_ecnPmax),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("Dcqcn", "Whether senders on RoCE paths run DCQCN", BooleanValue(true),
                          MakeBooleanAccessor(&PacketTransport::m_dcqcnEnabled),
                          MakeBooleanChecker());
    return tid;
}

PacketTransport::PacketTransport() : m_dcqcn(CreateObject<DcqcnRateControl>())
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
    for (Egress& e : m_egress)
    {
        e.wake.Cancel();
    }
    for (auto& [key, conn] : m_connections)
    {
        if (conn)
        {
            m_dcqcn->Stop(conn->cc);
        }
    }
    m_connections.clear();
    m_egress.clear();
    m_flows.clear();
    m_opOfUpFlow.clear();
    m_switchOps.clear();
    for (const Ptr<Node>& node : m_nodes)
    {
        if (Ptr<PhantoraSwitch> sw = node ? node->GetObject<PhantoraSwitch>() : nullptr)
        {
            sw->SetInterceptor(nullptr);
        }
    }
    m_linkDevices.clear();
    m_nodes.clear();
    m_topology = nullptr;
    PhantoraTransport::DoDispose();
}

PacketTransport::LinkLayerSettings PacketTransport::GetLinkLayerSettings() const
{
    return {m_mtu,     m_switchLatency, m_maxQueuePackets, m_nvlinkBuffer, m_pcieBuffer, m_ibBuffer,
            m_pfcXoff, m_pfcXon,        m_pfcHeadroom,     m_ecnKmin,      m_ecnKmax,    m_ecnPmax};
}

void PacketTransport::CheckConfiguration(const ClusterTopology& topology) const
{
    if (m_mtu <= m_headerBytes)
    {
        throw std::invalid_argument("PacketTransport: Mtu (" + std::to_string(m_mtu) +
                                    " B) must exceed HeaderBytes (" +
                                    std::to_string(m_headerBytes) + " B)");
    }
    // Throws if HeaderBytes cannot hold the header's fields.
    [[maybe_unused]] const PhantoraHeader sizeCheck(m_headerBytes);
    topology.CheckConnected();
    for (uint32_t l = 0; l < topology.GetNLinks(); ++l)
    {
        const std::string& kind = topology.GetLink(l).kind;
        if (kind != "nvlink" && kind != "pcie" && kind != "ib" && kind != "roce" &&
            kind != "ethernet")
        {
            throw std::invalid_argument("PacketTransport: link " + std::to_string(l) +
                                        " has kind \"" + kind +
                                        "\"; expected nvlink, pcie, ib, roce or ethernet");
        }
    }
    if (m_pfcXon == 0 && m_pfcXoff < 2u * m_mtu)
    {
        throw std::invalid_argument("PacketTransport: PfcXoffBytes (" + std::to_string(m_pfcXoff) +
                                    " B) must leave room for XON = XOFF - 2 MTU (MTU " +
                                    std::to_string(m_mtu) + " B); set PfcXonBytes");
    }
    if (m_pfcXon > m_pfcXoff || m_ecnKmin > m_ecnKmax)
    {
        throw std::invalid_argument(
            "PacketTransport: need PfcXonBytes <= PfcXoffBytes and EcnKminBytes <= EcnKmaxBytes");
    }
}

void PacketTransport::Attach(Ptr<ClusterTopology> topology, std::vector<Ptr<Node>> nodes,
                             std::vector<Ptr<PhantoraNetDevice>> linkDevices)
{
    NS_LOG_FUNCTION(this);
    if (m_topology)
    {
        throw std::logic_error("PacketTransport::Attach called twice");
    }
    if (!topology)
    {
        throw std::invalid_argument("PacketTransport::Attach needs a topology");
    }
    m_topology = topology;
    m_nodes = std::move(nodes);
    m_linkDevices = std::move(linkDevices);
    const uint32_t nLinks = topology->GetNLinks();
    m_egressOfDevice.assign(2 * nLinks, NO_EGRESS);
    for (uint32_t l = 0; l < nLinks; ++l)
    {
        const ClusterTopology::Link& link = topology->GetLink(l);
        const uint32_t ends[2] = {link.a, link.b};
        for (uint32_t side = 0; side < 2; ++side)
        {
            if (topology->GetNode(ends[side]).kind != ClusterTopology::NodeKind::Gpu)
            {
                continue; // the helper gave it to that node's switch
            }
            Ptr<PhantoraNetDevice> dev = m_linkDevices[2 * l + side];
            const auto egress = static_cast<uint32_t>(m_egress.size());
            m_egress.push_back({dev, {}, nullptr, {}});
            m_egressOfDevice[2 * l + side] = egress;
            dev->SetTxIdleCallback(MakeCallback(&PacketTransport::FeedEgress, this, egress));
        }
    }
    for (uint32_t g = 0; g < topology->GetNGpus(); ++g)
    {
        m_nodes[topology->GetGpuNode(g)]->RegisterProtocolHandler(
            MakeCallback(&PacketTransport::ReceiveAtGpu, this), PhantoraNetDevice::PROT_NUMBER,
            nullptr);
    }
}

PacketTransport::Connection* PacketTransport::GetConnection(uint32_t srcGpu, uint32_t dstGpu)
{
    const uint64_t key = (static_cast<uint64_t>(srcGpu) << 32) | dstGpu;
    auto it = m_connections.find(key);
    if (it != m_connections.end())
    {
        return it->second.get();
    }
    std::unique_ptr<Connection> conn;
    const std::vector<ClusterTopology::Hop> path = m_topology->Route(srcGpu, dstGpu);
    for (const ClusterTopology::Hop& hop : path)
    {
        const ClusterTopology::Link& link = m_topology->GetLink(hop.link);
        if (link.kind != "roce")
        {
            continue;
        }
        // DCQCN runs in the NIC, at the rate of its first RoCE port.
        conn = std::make_unique<Connection>();
        m_dcqcn->Init(conn->cc, link.rate);
        Time back(0);
        for (const ClusterTopology::Hop& h : m_topology->Route(dstGpu, srcGpu))
        {
            const ClusterTopology::Link& r = m_topology->GetLink(h.link);
            back += r.delay + r.rate.CalculateBytesTxTime(DcqcnRateControl::CNP_BYTES);
        }
        conn->cnpDelay = back;
        break;
    }
    return m_connections.emplace(key, std::move(conn)).first->second.get();
}

const DcqcnState* PacketTransport::GetDcqcnState(uint32_t srcGpu, uint32_t dstGpu) const
{
    auto it = m_connections.find((static_cast<uint64_t>(srcGpu) << 32) | dstGpu);
    return it == m_connections.end() || !it->second ? nullptr : &it->second->cc;
}

PacketTransport::Statistics PacketTransport::GetStatistics() const
{
    Statistics st;
    for (const Ptr<PhantoraNetDevice>& dev : m_linkDevices)
    {
        st.pauseFramesSent += dev->GetPauseFramesSent();
        st.resumeFramesSent += dev->GetResumeFramesSent();
        st.ecnMarks += dev->GetEcnMarks();
        st.creditStalls += dev->GetCreditStalls();
        st.maxQueueBytes = std::max(st.maxQueueBytes, dev->GetMaxQueueBytes());
        st.maxIngressBytes = std::max(st.maxIngressBytes, dev->GetMaxIngressBytes());
    }
    st.cnpsSent = m_cnpsSent;
    for (const auto& [key, conn] : m_connections)
    {
        if (conn)
        {
            st.rateCuts += conn->cc.rateCuts;
        }
    }
    // Overflow of a lossless buffer ends the run (PhantoraNetDevice::Receive throws), so a
    // run that gets here lost nothing; the counter is kept for reports.
    st.drops = 0;
    return st;
}

uint32_t PacketTransport::GetNGpus() const
{
    return m_topology ? m_topology->GetNGpus() : 0;
}

uint64_t PacketTransport::GetFlowNumbering() const
{
    return m_nextFlowId;
}

void PacketTransport::SetFlowNumbering(uint64_t flowsSent)
{
    if (!m_flows.empty())
    {
        throw std::logic_error("PacketTransport::SetFlowNumbering with flows in flight");
    }
    m_nextFlowId = flowsSent;
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
    if (!m_topology)
    {
        throw std::logic_error("PacketTransport::Send before Attach");
    }
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
    Connection* conn = m_dcqcnEnabled ? GetConnection(srcGpu, dstGpu) : nullptr;
    if (conn && conn->senders++ == 0)
    {
        m_dcqcn->SetActive(conn->cc, true);
    }
    Flow& flow = m_flows[id];
    flow = Flow{srcGpu, dstGpu, bytes, packets, packets, 0, id, std::move(onDelivered), conn};

    Egress& e = m_egress[egress];
    e.active.push_back(&flow);
    if (e.device->IsIdle())
    {
        FeedEgress(egress);
    }
}

void PacketTransport::SendThroughSwitch(const std::vector<uint32_t>& srcGpus,
                                        const std::vector<uint32_t>& dstGpus, uint64_t bytes,
                                        DeliveredCallback onDelivered)
{
    NS_LOG_FUNCTION(this << srcGpus.size() << dstGpus.size() << bytes);
    if (!m_topology)
    {
        throw std::logic_error("PacketTransport::SendThroughSwitch before Attach");
    }
    if (srcGpus.empty() || dstGpus.empty())
    {
        throw std::invalid_argument("PacketTransport::SendThroughSwitch: no source or destination");
    }
    // The switch: a forwarding node every member is linked to directly (the NVSwitch).
    const auto linkTo = [&](uint32_t gpu, uint32_t node) -> int64_t
    {
        const uint32_t g = m_topology->GetGpuNode(gpu);
        for (uint32_t link : m_topology->GetAdjacentLinks(g))
        {
            const ClusterTopology::Link& l = m_topology->GetLink(link);
            if ((l.a == g && l.b == node) || (l.b == g && l.a == node))
            {
                return link;
            }
        }
        return -1;
    };
    uint32_t sw = NO_EGRESS;
    const uint32_t first = m_topology->GetGpuNode(srcGpus.front());
    for (uint32_t link : m_topology->GetAdjacentLinks(first))
    {
        const ClusterTopology::Link& l = m_topology->GetLink(link);
        const uint32_t other = l.a == first ? l.b : l.a;
        if (m_topology->GetNode(other).kind != ClusterTopology::NodeKind::Switch)
        {
            continue;
        }
        bool everyone = true;
        for (const auto* group : {&srcGpus, &dstGpus})
        {
            for (uint32_t g : *group)
            {
                everyone = everyone && g < GetNGpus() && linkTo(g, other) >= 0;
            }
        }
        if (everyone)
        {
            sw = other;
            break;
        }
    }
    if (sw == NO_EGRESS)
    {
        throw std::invalid_argument(
            "NVLS: the GPUs do not share a switch they are all linked to directly");
    }
    Ptr<PhantoraSwitch> swObject = m_nodes[sw]->GetObject<PhantoraSwitch>();
    NS_ASSERT_MSG(swObject, "switch node " << sw << " has no PhantoraSwitch");
    if (!swObject->HasInterceptor())
    {
        swObject->SetInterceptor([this, sw](Ptr<const Packet> p, PhantoraNetDevice* ingress)
                                 { return CombineAtSwitch(sw, p, ingress); });
    }
    ++m_flowsStarted;
    const uint64_t payload = GetPayloadBytes();
    const uint64_t packets = bytes == 0 ? 1 : (bytes + payload - 1) / payload;
    const uint64_t opId = SWITCH_ID_BIT | m_nextSwitchId++;
    SwitchOp& op = m_switchOps[opId];
    op.sw = sw;
    op.nSrcs = static_cast<uint32_t>(srcGpus.size());
    op.bytes = bytes;
    op.dsts = dstGpus;
    op.heard.assign(packets, 0);
    op.dstsLeft = static_cast<uint32_t>(dstGpus.size());
    op.onDelivered = std::move(onDelivered);
    // The result's flows, one per destination: the switch feeds them, the GPUs count them.
    for (uint32_t d : dstGpus)
    {
        const uint64_t id = SWITCH_ID_BIT | m_nextSwitchId++;
        op.outFlows.push_back(id);
        m_flows[id] = Flow{srcGpus.front(), d, 0,  0,
                           packets,         0, id, [this, opId] { SwitchOpDelivered(opId); },
                           nullptr};
    }
    // The sources' flows up to the switch.  A packet is routed by its destination GPU:
    // any other member of the group, reached through the switch.
    for (uint32_t s : srcGpus)
    {
        uint32_t via = s;
        for (const auto* group : {&dstGpus, &srcGpus})
        {
            for (uint32_t g : *group)
            {
                via = via == s && g != s ? g : via;
            }
        }
        if (via == s)
        {
            throw std::invalid_argument("NVLS: a group of one GPU has no switch to go through");
        }
        const auto link = static_cast<uint32_t>(linkTo(s, sw));
        const bool gpuIsA = m_topology->GetLink(link).a == m_topology->GetGpuNode(s);
        const uint32_t egress =
            m_egressOfDevice[2 * static_cast<std::size_t>(link) + (gpuIsA ? 0 : 1)];
        NS_ASSERT(egress != NO_EGRESS);
        const uint64_t id = SWITCH_ID_BIT | m_nextSwitchId++;
        m_opOfUpFlow[id] = opId;
        Flow& flow = m_flows[id];
        flow = Flow{s, via, bytes, packets, packets, 0, id, nullptr, nullptr};
        Egress& e = m_egress[egress];
        e.active.push_back(&flow);
        if (e.device->IsIdle())
        {
            FeedEgress(egress);
        }
    }
}

bool PacketTransport::CombineAtSwitch(uint32_t sw, Ptr<const Packet> packet,
                                      PhantoraNetDevice* ingress)
{
    PhantoraHeader header;
    packet->PeekHeader(header);
    const auto up = m_opOfUpFlow.find(header.GetFlowId());
    if (up == m_opOfUpFlow.end())
    {
        return false; // not NVLS: forward it
    }
    auto opIt = m_switchOps.find(up->second);
    NS_ASSERT(opIt != m_switchOps.end());
    SwitchOp& op = opIt->second;
    NS_ASSERT_MSG(op.sw == sw, "an NVLS packet reached another switch");
    // The switch takes the packet into its reduction: its port's buffer is free again.
    const uint32_t size = packet->GetSize();
    if (ingress && ingress->GetIngressBytes() >= size)
    {
        ingress->ReleaseIngress(size);
    }
    auto flowIt = m_flows.find(header.GetFlowId());
    NS_ASSERT(flowIt != m_flows.end());
    if (++flowIt->second.packetsDelivered == flowIt->second.packetsTotal)
    {
        m_opOfUpFlow.erase(up);
        m_flows.erase(flowIt);
    }
    const uint32_t seq = header.GetSeq();
    if (++op.heard[seq] < op.nSrcs)
    {
        return true;
    }
    // Every source's packet k is in: packet k of the result to every destination.
    Ptr<PhantoraSwitch> swObject = m_nodes[sw]->GetObject<PhantoraSwitch>();
    for (std::size_t i = 0; i < op.dsts.size(); ++i)
    {
        PhantoraHeader out(m_headerBytes);
        out.SetFlowId(op.outFlows[i]);
        out.SetSrcGpu(header.GetSrcGpu());
        out.SetDstGpu(op.dsts[i]);
        out.SetPayloadBytes(header.GetPayloadBytes());
        out.SetSeq(seq);
        Ptr<Packet> copy = Create<Packet>(header.GetPayloadBytes());
        copy->AddHeader(out);
        ++m_packetsSent;
        swObject->Forward(copy, nullptr);
    }
    return true;
}

void PacketTransport::SwitchOpDelivered(uint64_t opId)
{
    auto it = m_switchOps.find(opId);
    NS_ASSERT(it != m_switchOps.end());
    if (--it->second.dstsLeft > 0)
    {
        return;
    }
    DeliveredCallback cb = std::move(it->second.onDelivered);
    m_switchOps.erase(it);
    ++m_flowsCompleted;
    if (cb)
    {
        cb();
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
    // The first flow in round-robin order whose connection's pacer lets it send now.
    auto it = e.active.begin();
    const Time now = Simulator::Now();
    Time earliest = Time::Max();
    for (; it != e.active.end(); ++it)
    {
        const Connection* c = (*it)->conn;
        if (!c || !c->cc.limited || c->cc.nextSend <= now)
        {
            break;
        }
        earliest = std::min(earliest, c->cc.nextSend);
    }
    if (it == e.active.end())
    {
        if (!e.wake.IsRunning() || e.wake.GetTs() > static_cast<uint64_t>(earliest.GetTimeStep()))
        {
            e.wake.Cancel();
            e.wake =
                Simulator::Schedule(earliest - now, &PacketTransport::WakeEgress, this, egress);
        }
        return;
    }
    Flow& flow = **it;
    e.active.erase(it);

    const auto seq = static_cast<uint32_t>(flow.packetsTotal - flow.packetsToSend);
    const uint32_t payload =
        static_cast<uint32_t>(std::min<uint64_t>(GetPayloadBytes(), flow.bytesToSend));
    flow.bytesToSend -= payload;
    if (--flow.packetsToSend > 0)
    {
        e.lastServed = &flow;
    }
    if (flow.conn)
    {
        m_dcqcn->OnSent(flow.conn->cc, payload + m_headerBytes);
        if (flow.packetsToSend == 0 && --flow.conn->senders == 0)
        {
            m_dcqcn->SetActive(flow.conn->cc, false);
        }
    }

    PhantoraHeader header(m_headerBytes);
    header.SetFlowId(flow.id);
    header.SetSrcGpu(flow.srcGpu);
    header.SetDstGpu(flow.dstGpu);
    header.SetPayloadBytes(payload);
    header.SetSeq(seq);
    // A zero-filled virtual payload: the size is all the model needs, and no bytes are copied.
    Ptr<Packet> packet = Create<Packet>(payload);
    packet->AddHeader(header);
    ++m_packetsSent;
    NS_LOG_LOGIC("gpu" << flow.srcGpu << " sends " << header);
    e.device->Enqueue(packet);
}

void PacketTransport::ResetCongestionState()
{
    // Nothing is in flight: every queue is empty, every credit and RESUME has arrived or
    // arrives now.  Only DCQCN still remembers the past; forgetting it makes the network
    // at an idle instant a function of the time and the flow numbering alone, which is
    // what the bridge's checkpoints assume.
    ++m_epoch;
    for (auto& [key, conn] : m_connections)
    {
        if (conn)
        {
            m_dcqcn->Reset(conn->cc);
        }
    }
    for (Egress& e : m_egress)
    {
        e.wake.Cancel();
    }
}

void PacketTransport::WakeEgress(uint32_t egress)
{
    if (m_egress[egress].device->IsIdle())
    {
        FeedEgress(egress);
    }
}

void PacketTransport::ReceiveAtGpu(Ptr<NetDevice>, Ptr<const Packet> packet, uint16_t,
                                   const Address&, const Address&, NetDevice::PacketType)
{
    PhantoraHeader header;
    packet->PeekHeader(header);
    NS_LOG_LOGIC("gpu" << header.GetDstGpu() << " receives " << header);
    auto it = m_flows.find(header.GetFlowId());
    NS_ASSERT_MSG(it != m_flows.end(), "packet of unknown flow " << header.GetFlowId() << " at gpu"
                                                                 << header.GetDstGpu());
    Flow& flow = it->second;
    if (header.GetCe() && flow.conn && m_dcqcn->TakeCnpSlot(flow.conn->cc))
    {
        ++m_cnpsSent;
        // Looked up on arrival: the network may have gone idle and reset meanwhile.
        Simulator::Schedule(flow.conn->cnpDelay,
                            [self = Ptr<PacketTransport>(this), conn = flow.conn, epoch = m_epoch]()
                            {
                                if (self->m_epoch == epoch && self->m_topology)
                                {
                                    self->m_dcqcn->OnCnp(conn->cc);
                                }
                            });
    }
    ++m_packetsDelivered;
    m_bytesDelivered += header.GetPayloadBytes();
    if (++flow.packetsDelivered < flow.packetsTotal)
    {
        return;
    }
    DeliveredCallback cb = std::move(flow.onDelivered);
    const bool ofSwitch = (header.GetFlowId() & SWITCH_ID_BIT) != 0;
    m_flows.erase(it);
    if (!ofSwitch)
    {
        ++m_flowsCompleted; // a switch op counts once, when its last destination is done
    }
    if (m_flows.empty())
    {
        ResetCongestionState();
    }
    if (cb)
    {
        cb();
    }
}

} // namespace ns3
