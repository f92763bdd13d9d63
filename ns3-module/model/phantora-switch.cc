#include "phantora-switch.h"

#include "ns3/assert.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "phantora-header.h"
#include "phantora-net-device.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PhantoraSwitch");
NS_OBJECT_ENSURE_REGISTERED(PhantoraSwitch);

TypeId PhantoraSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PhantoraSwitch")
            .SetParent<Object>()
            .SetGroupName("Phantora")
            .AddConstructor<PhantoraSwitch>()
            .AddAttribute("Latency",
                          "Time from a packet's full reception to its enqueueing "
                          "on the output port (lookup, crossbar)",
                          TimeValue(Seconds(0)), MakeTimeAccessor(&PhantoraSwitch::m_latency),
                          MakeTimeChecker(Seconds(0)));
    return tid;
}

PhantoraSwitch::PhantoraSwitch()
{
    NS_LOG_FUNCTION(this);
}

void PhantoraSwitch::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_ports.clear();
    m_routes.clear();
    m_intercept = nullptr;
    m_topology = nullptr;
    Object::DoDispose();
}

void PhantoraSwitch::Setup(Ptr<const ClusterTopology> topology, uint32_t node)
{
    NS_LOG_FUNCTION(this << node);
    m_topology = topology;
    m_node = node;
    m_routes.assign(topology->GetNGpus(), {});
}

void PhantoraSwitch::AddPort(uint32_t link, Ptr<PhantoraNetDevice> device)
{
    NS_LOG_FUNCTION(this << link << device);
    m_ports.emplace_back(link, device);
    std::sort(m_ports.begin(), m_ports.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& r : m_routes)
    {
        r.clear();
    }
}

uint32_t PhantoraSwitch::EcmpIndex(uint64_t flowId, uint32_t node, uint32_t nChoices)
{
    return ClusterTopology::EcmpIndex(flowId, node, nChoices);
}

const std::vector<Ptr<PhantoraNetDevice>>& PhantoraSwitch::Ports(uint32_t dstGpu)
{
    NS_ASSERT_MSG(dstGpu < m_routes.size(), "switch " << m_topology->GetNode(m_node).name
                                                      << ": packet for unknown GPU " << dstGpu);
    std::vector<Ptr<PhantoraNetDevice>>& ports = m_routes[dstGpu];
    if (ports.empty())
    {
        for (const ClusterTopology::Hop& hop : m_topology->NextHops(m_node, dstGpu))
        {
            auto it = std::lower_bound(m_ports.begin(), m_ports.end(), hop.link,
                                       [](const auto& p, uint32_t link) { return p.first < link; });
            if (it == m_ports.end() || it->first != hop.link)
            {
                throw std::logic_error("switch " + m_topology->GetNode(m_node).name +
                                       " has no device on link " + std::to_string(hop.link) +
                                       " (AddPort every link of its node)");
            }
            ports.push_back(it->second);
        }
        NS_ASSERT_MSG(!ports.empty(), "switch " << m_topology->GetNode(m_node).name
                                                << " received a packet addressed to itself");
    }
    return ports;
}

void PhantoraSwitch::Receive(Ptr<NetDevice> device, Ptr<const Packet> packet, uint16_t,
                             const Address&, const Address&, NetDevice::PacketType)
{
    // Every device here is a PhantoraNetDevice (AddPort); the packet occupies its ingress
    // port's buffer until it has left, which is what link-level flow control accounts.
    auto* ingress = static_cast<PhantoraNetDevice*>(PeekPointer(device));
    if (m_intercept && m_intercept(packet, ingress))
    {
        return;
    }
    Forward(packet, ingress);
}

void PhantoraSwitch::Forward(Ptr<const Packet> packet, PhantoraNetDevice* ingress)
{
    PhantoraHeader header;
    packet->PeekHeader(header);
    NS_LOG_LOGIC("switch " << m_node << " forwards " << header);
    const std::vector<Ptr<PhantoraNetDevice>>& ports = Ports(header.GetDstGpu());
    const Ptr<PhantoraNetDevice>& out =
        ports[EcmpIndex(header.GetFlowId(), m_node, static_cast<uint32_t>(ports.size()))];
    ++m_forwarded;
    if (m_latency.IsZero())
    {
        out->Enqueue(packet, ingress);
    }
    else
    {
        Simulator::Schedule(m_latency, &PhantoraNetDevice::Enqueue, out, packet, ingress);
    }
}

} // namespace ns3
