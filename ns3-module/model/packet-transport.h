#ifndef PACKET_TRANSPORT_H
#define PACKET_TRANSPORT_H

#include "cluster-topology.h"
#include "dcqcn-rate-control.h"
#include "ns3/address.h"
#include "ns3/event-id.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "phantora-transport.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ns3
{

class Node;
class Packet;
class PhantoraNetDevice;

/**
 * \ingroup phantora
 * \brief The packet-level network: one ns3::Node per topology node, one pair of
 * PhantoraNetDevices joined by a PhantoraChannel per topology link, a PhantoraSwitch
 * on every non-GPU node, and MTU-sized packets.  PacketTransportHelper builds that
 * network from a ClusterTopology (with this transport's link-layer attributes) and
 * attaches the transport to it; the transport runs flows over it.
 *
 * A Send() of B bytes becomes k = max(1, ceil(B / P)) packets, P = Mtu - HeaderBytes:
 * k - 1 packets of P payload bytes and a last one with the rest (a 0-byte send is a
 * single header-only packet).  Each packet carries a PhantoraHeader of HeaderBytes,
 * so packet i has wire_i = payload_i + HeaderBytes bytes.
 *
 * Timing: a device serializes a packet in TxTime(wire) =
 * DataRate::CalculateBytesTxTime(wire), rounded to the simulator's Time resolution per
 * packet; packets of a backlog leave back to back; the channel adds its delay; a
 * switch forwards a packet once it is fully received (store-and-forward, plus the
 * optional SwitchLatency, 0 by default).  One flow alone on a path of h links of equal
 * rate and delay d is therefore delivered after
 *
 *   sum_i TxTime(wire_i) + (h - 1) * max_i TxTime(wire_i) + h d,
 *
 * the tandem-queue result: every hop after the first adds the largest packet's time,
 * not the last packet's, because a short last packet catches up with the full one
 * ahead of it and waits behind it at the switch.  Since only the last packet can be
 * short, max_i wire_i = min(Mtu, B + HeaderBytes).  A direct link (h = 1) takes
 * sum_i TxTime(wire_i) + d.
 *
 * A ring all-reduce of B bytes over n GPUs of a single-switch star (h = 2) has no
 * contention (each link carries one flow per direction), and each of its 2(n-1) steps
 * sends a chunk of c = ceil(B / n) bytes, k = ceil(c / P) packets (k = 1 when c = 0),
 * so it completes in
 *
 *   total = 2(n-1) * ( sum_{i=1..k} TxTime(wire_i) + TxTime(min(Mtu, c + HeaderBytes)) + 2 d ).
 *
 * When P divides c (or k = 1) the largest packet is also the last one, and the second
 * term is TxTime(wire_k).
 *
 * The end-to-end tests rely on this formula; the model computes nothing in a fixed
 * unit, so it holds at any Time resolution (the simulator uses picoseconds).
 *
 * Flows leaving through the same device share it round-robin, one packet per active
 * flow.  The device is fed from per-flow state only when it goes idle, so a 1 GiB send
 * costs no memory up front and a flow starting later gets its share at once.  A GPU with
 * several links sends each flow through the first hop NextHops picks by the flow's hash.
 *
 * Link layer by link kind (see PhantoraNetDevice for the mechanics; buffers are per
 * ingress port of a forwarding node, GPUs sink whatever reaches them):
 *
 * - "nvlink", "pcie", "ib": lossless credit-based flow control; the receive buffer of
 *   each port is NvlinkBufferBytes, PcieBufferBytes or IbBufferBytes.  NVLink is its own
 *   channel type: credits only, no Ethernet-style congestion control.
 * - "roce": PFC (PfcXoffBytes, PfcXonBytes, PfcHeadroomBytes), ECN marking at switch
 *   egress ports (EcnKminBytes, EcnKmaxBytes, EcnPmax; NICs do not mark: their queue is
 *   the host side of the fabric), and DCQCN (DcqcnRateControl) at the sender for every
 *   GPU pair whose path crosses a RoCE link: the receiving GPU answers CE-marked packets
 *   with CNPs (at most one per CnpInterval), which reach the sender after the reverse
 *   path's delays and a CNP's serialization per hop (CNPs ride a strict-priority class,
 *   so they do not queue behind data); the sender paces the pair's packets at DCQCN's
 *   current rate.
 * - "ethernet": PFC without ECN or DCQCN (lossless Ethernet, no congestion control).
 *
 * With buffers above the bandwidth-delay product (the 0 = automatic defaults) and no
 * contention, credits never run out, nothing reaches XOFF or Kmin, and DCQCN never
 * leaves line rate: the timing formula above holds unchanged on every link kind.
 *
 * NVLS (SendThroughSwitch) at packet level: every source GPU sends its packets up its
 * link to the NVSwitch as an ordinary flow (sharing its device round-robin with the
 * others); the switch takes them in (PhantoraSwitch::SetInterceptor), frees their
 * ingress buffer and counts, per packet index, the sources heard from.  Once all have
 * sent packet k, the switch makes packet k of the result and forwards one copy to every
 * destination GPU (multicast), which queues at that port like any other packet.  So a
 * reduce of n sources costs each source's link its bytes once and the destination's
 * link one copy, a multicast the source's link one copy; alone, either takes exactly the
 * time of one flow through the switch.  The switch combines at line rate and holds the
 * partial sums in a buffer of its own (not the ports' credits).
 */
class PacketTransport : public PhantoraTransport
{
public:
    static TypeId GetTypeId();
    PacketTransport();
    ~PacketTransport() override;

    /// What the devices, channels and switches of the network are built with: this
    /// transport's attributes, read by PacketTransportHelper.
    struct LinkLayerSettings
    {
        uint16_t mtu;
        Time switchLatency;
        uint32_t maxQueuePackets;
        uint32_t nvlinkBuffer; ///< 0: automatic (see the attributes)
        uint32_t pcieBuffer;
        uint32_t ibBuffer;
        uint32_t pfcXoff;
        uint32_t pfcXon;
        uint32_t pfcHeadroom;
        uint32_t ecnKmin;
        uint32_t ecnKmax;
        double ecnPmax;
    };
    LinkLayerSettings GetLinkLayerSettings() const;

    /**
     * Checks the attributes against \p topology before a network is built for it.  Throws
     * std::runtime_error when some GPU cannot reach another, std::invalid_argument when
     * Mtu and HeaderBytes leave no room for payload, a link's kind is unknown or the PFC
     * and ECN thresholds contradict each other.
     */
    void CheckConfiguration(const ClusterTopology& topology) const;

    /**
     * Runs on the network PacketTransportHelper built for \p topology: \p nodes per
     * topology node, \p linkDevices two per link (end a, end b).  The devices at GPUs
     * become the transport's egress ports, and GPUs deliver to it.  Call once, before
     * Send().
     */
    void Attach(Ptr<ClusterTopology> topology, std::vector<Ptr<Node>> nodes,
                std::vector<Ptr<PhantoraNetDevice>> linkDevices);

    void Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
              DeliveredCallback onDelivered) override;
    /// NVLS: the switch reduces and multicasts packet by packet (see the class comment).
    /// Throws std::invalid_argument when the GPUs share no switch they are all linked to.
    void SendThroughSwitch(const std::vector<uint32_t>& srcGpus,
                           const std::vector<uint32_t>& dstGpus, uint64_t bytes,
                           DeliveredCallback onDelivered) override;
    uint32_t GetNGpus() const override;
    uint64_t GetFlowNumbering() const override;
    void SetFlowNumbering(uint64_t flowsSent) override;

    Ptr<ClusterTopology> GetTopology() const { return m_topology; }
    /// The ns3::Node of topology node \p topologyNode.
    Ptr<Node> GetNode(uint32_t topologyNode) const;
    /// The device of topology link \p link at its end a (\p atB false) or b (\p atB true).
    Ptr<PhantoraNetDevice> GetDevice(uint32_t link, bool atB) const;

    /// Payload bytes of a full packet: Mtu - HeaderBytes.
    uint32_t GetPayloadBytes() const { return m_mtu - m_headerBytes; }
    uint32_t GetHeaderBytes() const { return m_headerBytes; }
    uint32_t GetMtu() const { return m_mtu; }

    uint64_t GetFlowsStarted() const { return m_flowsStarted; }
    uint64_t GetFlowsCompleted() const { return m_flowsCompleted; }
    /// Packets created at source GPUs.
    uint64_t GetPacketsSent() const { return m_packetsSent; }
    /// Packets that reached their destination GPU.
    uint64_t GetPacketsDelivered() const { return m_packetsDelivered; }
    /// Payload bytes that reached their destination GPU.
    uint64_t GetBytesDelivered() const { return m_bytesDelivered; }
    /// Packet transmissions over all devices (one per packet per hop).
    uint64_t GetPacketTransmissions() const;

    /// Link-layer and congestion-control counters summed over the network.
    struct Statistics
    {
        uint64_t pauseFramesSent{0};  ///< PFC PAUSE (XOFF) frames
        uint64_t resumeFramesSent{0}; ///< PFC RESUME (XON) frames
        uint64_t ecnMarks{0};         ///< packets marked CE at switch egress
        uint64_t cnpsSent{0};         ///< CNPs sent by receiving GPUs
        uint64_t rateCuts{0};         ///< DCQCN rate decreases
        uint64_t creditStalls{0};     ///< transmissions that waited for credits
        uint64_t drops{0};            ///< packets lost: always 0, the fabric is lossless
        uint64_t maxQueueBytes{0};    ///< deepest egress queue, bytes
        uint64_t maxIngressBytes{0};  ///< fullest ingress buffer, bytes
    };
    Statistics GetStatistics() const;
    /// The DCQCN parameters in use (create-time defaults from ns3::DcqcnRateControl).
    Ptr<DcqcnRateControl> GetDcqcn() const { return m_dcqcn; }
    /**
     * DCQCN state of the GPU pair \p srcGpu -> \p dstGpu, or nullptr when no flow of
     * the pair has crossed a RoCE link (or DCQCN is disabled).
     */
    const DcqcnState* GetDcqcnState(uint32_t srcGpu, uint32_t dstGpu) const;

protected:
    void DoDispose() override;

private:
    /// One ordered GPU pair: a RoCE queue pair's congestion state.
    struct Connection
    {
        DcqcnState cc;
        Time cnpDelay;       ///< receiver to sender
        uint32_t senders{0}; ///< flows with packets left to send
    };

    struct Flow
    {
        uint32_t srcGpu;
        uint32_t dstGpu;
        uint64_t bytesToSend;   ///< payload not yet handed to the device
        uint64_t packetsToSend; ///< packets not yet handed to the device
        uint64_t packetsTotal;  ///< packets of the whole flow
        uint64_t packetsDelivered;
        uint64_t id;
        DeliveredCallback onDelivered;
        Connection* conn; ///< nullptr: no DCQCN on this path
    };

    /// One SendThroughSwitch: its sources' packets are combined at switch node \p sw.
    struct SwitchOp
    {
        uint32_t sw;
        uint32_t nSrcs;
        uint64_t bytes;
        std::vector<uint32_t> dsts;
        std::vector<uint64_t> outFlows; ///< per destination: the flow its copies belong to
        std::vector<uint32_t> heard;    ///< per packet index: sources whose packet arrived
        uint32_t dstsLeft;              ///< destinations still missing packets
        DeliveredCallback onDelivered;
    };

    /// The switch's interceptor: takes the packets of SendThroughSwitch's up flows.
    bool CombineAtSwitch(uint32_t sw, Ptr<const Packet> packet, PhantoraNetDevice* ingress);
    /// A destination of switch op \p op has every packet.
    void SwitchOpDelivered(uint64_t op);

    /// The sending side of one GPU device: the flows with packets left, in service order.
    struct Egress
    {
        Ptr<PhantoraNetDevice> device;
        std::deque<Flow*> active;
        Flow* lastServed{nullptr}; ///< rejoins the back at the next turn, after newcomers
        EventId wake;              ///< every active flow is paced: retry when the first may send
    };

    /// The device went idle: hand it the next packet in round-robin order, if any.
    void FeedEgress(uint32_t egress);
    void WakeEgress(uint32_t egress);
    /// The last flow was delivered: DCQCN state back to line rate (see the .cc).
    void ResetCongestionState();
    /// The pair's connection, made on first use; nullptr when its path has no RoCE link.
    Connection* GetConnection(uint32_t srcGpu, uint32_t dstGpu);
    void ReceiveAtGpu(Ptr<NetDevice> device, Ptr<const Packet> packet, uint16_t protocol,
                      const Address& from, const Address& to, NetDevice::PacketType packetType);

    uint16_t m_mtu{4096};
    uint16_t m_headerBytes{48};
    Time m_switchLatency;
    uint32_t m_maxQueuePackets{1000000};
    uint32_t m_nvlinkBuffer{0};
    uint32_t m_pcieBuffer{0};
    uint32_t m_ibBuffer{0};
    uint32_t m_pfcXoff{0};
    uint32_t m_pfcXon{0};
    uint32_t m_pfcHeadroom{0};
    uint32_t m_ecnKmin{0};
    uint32_t m_ecnKmax{0};
    double m_ecnPmax{0};
    bool m_dcqcnEnabled{true};
    Ptr<DcqcnRateControl> m_dcqcn;
    /// By src << 32 | dst; a null entry: the pair's path has no RoCE link.
    std::unordered_map<uint64_t, std::unique_ptr<Connection>> m_connections;
    uint64_t m_cnpsSent{0};
    uint64_t m_epoch{0}; ///< idle resets so far: CNPs from before one are void

    Ptr<ClusterTopology> m_topology;
    std::vector<Ptr<Node>> m_nodes;                    ///< per topology node
    std::vector<Ptr<PhantoraNetDevice>> m_linkDevices; ///< 2 per link: end a, end b
    std::vector<uint32_t> m_egressOfDevice;            ///< same index; UINT32_MAX off GPUs
    std::vector<Egress> m_egress;
    // Flows by id; entries do not move while in the map, so Egress may point at them.
    std::unordered_map<uint64_t, Flow> m_flows;
    uint64_t m_nextFlowId{0};
    /// SendThroughSwitch's flows and ops take ids from their own counter (top bit set), so
    /// that Send's numbering, and with it ECMP, is the flow-level transport's.
    uint64_t m_nextSwitchId{0};
    std::unordered_map<uint64_t, uint64_t> m_opOfUpFlow; ///< up flow id -> op id
    std::unordered_map<uint64_t, SwitchOp> m_switchOps;

    uint64_t m_flowsStarted{0};
    uint64_t m_flowsCompleted{0};
    uint64_t m_packetsSent{0};
    uint64_t m_packetsDelivered{0};
    uint64_t m_bytesDelivered{0};
};

} // namespace ns3

#endif
