#ifndef PHANTORA_SWITCH_H
#define PHANTORA_SWITCH_H

#include "cluster-topology.h"
#include "ns3/address.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ns3
{

class Packet;
class PhantoraNetDevice;

/**
 * \ingroup phantora
 * \brief Forwarding of a non-GPU topology node (NVSwitch, PCIe switch, NIC, leaf,
 * spine), aggregated to its ns3::Node and registered as the node's protocol handler.
 *
 * A packet is forwarded once fully received (the devices deliver whole packets), after
 * the optional Latency, to a port chosen among ClusterTopology::NextHops(node, dst GPU).
 * Among equal-cost ports the flow id picks, so that all packets of a flow take the same
 * path and arrive in order, as with 5-tuple ECMP hashing.
 */
class PhantoraSwitch : public Object
{
public:
    static TypeId GetTypeId();
    PhantoraSwitch();

    /// Forwards for topology node \p node of \p topology.
    void Setup(Ptr<const ClusterTopology> topology, uint32_t node);

    /// \p device is this node's end of topology link \p link.
    void AddPort(uint32_t link, Ptr<PhantoraNetDevice> device);

    /// Node protocol handler: forwards \p packet towards the GPU named in its header.
    void Receive(Ptr<NetDevice> device, Ptr<const Packet> packet, uint16_t protocol,
                 const Address& from, const Address& to, NetDevice::PacketType packetType);

    /// Forwards \p packet towards the GPU in its header (ECMP by flow id).  \p ingress: the
    /// port whose buffer it occupies until it has left; nullptr for a packet the switch
    /// made itself (an NVLS result, see SetInterceptor).
    void Forward(Ptr<const Packet> packet, PhantoraNetDevice* ingress);

    /**
     * Packets the switch handles itself instead of forwarding: the NVSwitch's reduction
     * and multicast (NVLS), which ns3::PacketTransport runs.  The interceptor sees every
     * packet this switch receives, with the port it came in through, and returns whether
     * it took it; it then releases the packet's ingress buffer and may Forward() packets
     * of its own.  An empty function (the default) forwards everything.
     */
    using Interceptor = std::function<bool(Ptr<const Packet> packet, PhantoraNetDevice* ingress)>;
    void SetInterceptor(Interceptor interceptor) { m_intercept = std::move(interceptor); }
    bool HasInterceptor() const { return static_cast<bool>(m_intercept); }

    uint32_t GetTopologyNode() const { return m_node; }
    uint64_t GetForwardedPackets() const { return m_forwarded; }

    /// The ECMP choice among \p nChoices equal-cost ports at topology node \p node.
    static uint32_t EcmpIndex(uint64_t flowId, uint32_t node, uint32_t nChoices);

protected:
    void DoDispose() override;

private:
    /// Output ports towards \p dstGpu, filled from the topology on first use.
    const std::vector<Ptr<PhantoraNetDevice>>& Ports(uint32_t dstGpu);

    Ptr<const ClusterTopology> m_topology;
    uint32_t m_node{0};
    Time m_latency;
    std::vector<std::pair<uint32_t, Ptr<PhantoraNetDevice>>> m_ports; ///< (link id, device)
    std::vector<std::vector<Ptr<PhantoraNetDevice>>> m_routes;        ///< per destination GPU
    uint64_t m_forwarded{0};
    Interceptor m_intercept;
};

} // namespace ns3

#endif
