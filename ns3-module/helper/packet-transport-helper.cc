#include "packet-transport-helper.h"

#include "ns3/mac48-address.h"
#include "ns3/node.h"
#include "ns3/phantora-channel.h"
#include "ns3/phantora-net-device.h"
#include "ns3/phantora-switch.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns3
{

namespace
{

/// The link layer of \p dev, the end of \p link (id \p l) on side \p side, by the link's kind.
void ConfigureLinkLayer(const ClusterTopology::Link& link, uint32_t l, uint32_t side,
                        Ptr<PhantoraNetDevice> dev, bool atSwitch, bool atNic,
                        const PacketTransport::LinkLayerSettings& s)
{
    // Bytes a link holds in flight over its round trip; what a buffer needs so that flow
    // control never idles an uncongested link.
    const double bytesPerSecond = static_cast<double>(link.rate.GetBitRate()) / 8;
    const auto roundTrip =
        static_cast<uint64_t>(std::ceil(bytesPerSecond * 2 * link.delay.GetSeconds()));
    auto clamp = [](uint64_t bytes)
    { return static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX)); };
    if (link.kind == "roce" || link.kind == "ethernet")
    {
        if (atSwitch || atNic)
        {
            const uint32_t xon = s.pfcXon != 0 ? s.pfcXon : s.pfcXoff - 2 * s.mtu;
            const uint32_t headroom =
                s.pfcHeadroom != 0 ? s.pfcHeadroom : clamp(roundTrip + 3ULL * s.mtu);
            dev->SetIngressPfc(s.pfcXoff, xon, headroom);
        }
        if (atSwitch && link.kind == "roce")
        {
            dev->SetEcnMarking(s.ecnKmin, s.ecnKmax, s.ecnPmax, 2 * l + side + 1);
        }
        return;
    }
    if (!atSwitch && !atNic)
    {
        return; // a GPU consumes what reaches it at once: nothing to hold back
    }
    uint32_t buffer = link.kind == "nvlink" ? s.nvlinkBuffer
                      : link.kind == "pcie" ? s.pcieBuffer
                                            : s.ibBuffer;
    if (buffer == 0)
    {
        buffer = clamp(roundTrip + 4ULL * s.mtu);
    }
    dev->SetIngressCredit(buffer);
}

} // namespace

PacketTransportHelper::PacketTransportHelper()
{
    m_factory.SetTypeId(PacketTransport::GetTypeId());
}

void PacketTransportHelper::SetTransportAttribute(const std::string& name,
                                                  const AttributeValue& value)
{
    m_factory.Set(name, value);
}

Ptr<PacketTransport> PacketTransportHelper::Install(Ptr<ClusterTopology> topology) const
{
    if (!topology)
    {
        throw std::invalid_argument("PacketTransportHelper::Install: no topology");
    }
    Ptr<PacketTransport> transport = m_factory.Create<PacketTransport>();
    transport->CheckConfiguration(*topology);
    const PacketTransport::LinkLayerSettings settings = transport->GetLinkLayerSettings();

    const uint32_t nNodes = topology->GetNNodes();
    std::vector<Ptr<Node>> nodes;
    nodes.reserve(nNodes);
    for (uint32_t i = 0; i < nNodes; ++i)
    {
        nodes.push_back(CreateObject<Node>());
    }

    std::vector<Ptr<PhantoraSwitch>> switches(nNodes);
    for (uint32_t i = 0; i < nNodes; ++i)
    {
        if (topology->GetNode(i).kind == ClusterTopology::NodeKind::Gpu)
        {
            continue;
        }
        Ptr<PhantoraSwitch> sw = CreateObject<PhantoraSwitch>();
        sw->SetAttribute("Latency", TimeValue(settings.switchLatency));
        sw->Setup(topology, i);
        nodes[i]->AggregateObject(sw);
        switches[i] = sw;
    }

    const uint32_t nLinks = topology->GetNLinks();
    std::vector<Ptr<PhantoraNetDevice>> linkDevices(2 * nLinks);
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
            dev->SetMtu(settings.mtu);
            dev->SetAttribute("MaxQueuePackets", UintegerValue(settings.maxQueuePackets));
            dev->SetAddress(Mac48Address::Allocate());
            dev->SetName(topology->GetNode(node).name + "->" + topology->GetNode(peer).name + " (" +
                         link.kind + " link " + std::to_string(l) + ")");
            nodes[node]->AddDevice(dev);
            dev->Attach(channel);
            linkDevices[2 * l + side] = dev;
            if (switches[node])
            {
                switches[node]->AddPort(l, dev);
            }
        }
    }

    for (uint32_t l = 0; l < nLinks; ++l)
    {
        const ClusterTopology::Link& link = topology->GetLink(l);
        const uint32_t ends[2] = {link.a, link.b};
        for (uint32_t side = 0; side < 2; ++side)
        {
            const ClusterTopology::NodeKind kind = topology->GetNode(ends[side]).kind;
            ConfigureLinkLayer(link, l, side, linkDevices[2 * l + side],
                               kind == ClusterTopology::NodeKind::Switch,
                               kind == ClusterTopology::NodeKind::Nic, settings);
        }
    }

    for (uint32_t i = 0; i < nNodes; ++i)
    {
        if (switches[i])
        {
            nodes[i]->RegisterProtocolHandler(MakeCallback(&PhantoraSwitch::Receive, switches[i]),
                                              PhantoraNetDevice::PROT_NUMBER, nullptr);
        }
    }
    // The GPUs' devices and protocol handlers are the transport's.
    transport->Attach(topology, std::move(nodes), std::move(linkDevices));
    return transport;
}

} // namespace ns3
