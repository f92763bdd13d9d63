#ifndef PHANTORA_NET_DEVICE_H
#define PHANTORA_NET_DEVICE_H

#include "ns3/address.h"
#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <string>

namespace ns3
{

class Node;
class Packet;
class PhantoraChannel;

/**
 * \ingroup phantora
 * \brief One port of a GPU, NIC or switch: a FIFO transmit queue feeding one direction
 * of a PhantoraChannel, modeled on PointToPointNetDevice.
 *
 * A packet occupies the transmitter for DataRate::CalculateBytesTxTime(packet size);
 * the next queued packet starts the instant the previous one is serialized, so a
 * backlog leaves back to back.  The peer receives a packet once its last bit has
 * crossed the channel (store-and-forward).  There is no link-layer framing: the
 * per-packet overhead is the PhantoraHeader, already inside the packet.
 *
 * The queue is lossless: exceeding MaxQueuePackets throws std::runtime_error rather
 * than dropping, because collective traffic has no retransmission in this model.
 *
 * Link-level flow control, configured by the transport per link kind, acts on the
 * device's two roles:
 *
 * - Receiving side (ingress port of a forwarding node): the bytes that came in through
 *   this port and still wait somewhere in the node are its buffer occupancy; the egress
 *   device that sends such a packet on releases them (ReleaseIngress) when its last bit
 *   has left.  In credit mode (InfiniBand, NVLink, PCIe) the upstream device may only
 *   hold the buffer's size in unreturned credits; released bytes return to it as
 *   credits one link delay later.  In PFC mode (RoCE, lossless Ethernet) crossing
 *   PfcXoff sends a PAUSE upstream, falling back to PfcXon sends a RESUME; the headroom
 *   above XOFF absorbs what is in flight meanwhile, and exceeding it throws
 *   std::runtime_error, since a lossless fabric must never drop.
 * - Sending side: a packet starts only when the device is not paused and holds enough
 *   credits.  Credits that have not yet arrived cost no event unless the device waits
 *   for them, so flow control with sufficient buffers leaves timing and speed unchanged.
 *   Optionally (RoCE switch ports) the egress marks ECN CE, RED-style on the bytes
 *   queued when a packet starts: never below EcnKmin, with a probability rising linearly
 *   to EcnPmax at EcnKmax, always above.
 */
class PhantoraNetDevice : public NetDevice
{
public:
    /// The one protocol carried; an IEEE 802 local experimental EtherType.
    static constexpr uint16_t PROT_NUMBER = 0x88B5;

    static TypeId GetTypeId();
    PhantoraNetDevice();
    ~PhantoraNetDevice() override;

    /// Connects this device to one end of \p channel.
    void Attach(Ptr<PhantoraChannel> channel);
    Ptr<PhantoraChannel> GetPhantoraChannel() const;

    /**
     * Queues \p packet for transmission; transmission starts now if the device is idle.
     * The packet is never modified (ECN marking copies it), so forwarding can hand on the
     * packet it received.  \p ingress is the port of this node it came in through, whose
     * buffer holds it until its last bit has left (nullptr when it starts here).
     */
    void Enqueue(Ptr<const Packet> packet, PhantoraNetDevice* ingress = nullptr);

    /// Receiving side in credit mode: the upstream peer may have \p bufferBytes in flight
    /// or buffered here; it starts with that many credits.
    void SetIngressCredit(uint32_t bufferBytes);
    /// Receiving side in PFC mode: PAUSE upstream at \p xoff buffered bytes, RESUME at
    /// \p xon; \p headroom more bytes may arrive after a PAUSE before the buffer overflows.
    void SetIngressPfc(uint32_t xoff, uint32_t xon, uint32_t headroom);
    /**
     * Sending side: RED-style ECN marking on queued bytes (see the class description).
     * The coin flipped for a packet is a hash of its flow id, its index in the flow and
     * \p salt (unique per device), not a random stream: a network rebuilt while idle
     * (the bridge's checkpoints) marks exactly as the one it replaces would have.
     */
    void SetEcnMarking(uint32_t kmin, uint32_t kmax, double pmax, uint64_t salt);

    /// \p bytes that entered through this port have left the node.
    void ReleaseIngress(uint32_t bytes);
    /// PFC from the peer: stop (\p paused) or resume starting transmissions.
    void SetPaused(bool paused);
    /// Credit mode: \p bytes of the peer's buffer are free again, as of \p at.
    void ReturnCredits(uint32_t bytes, Time at);

    /// Called by the channel when the last bit of \p packet has arrived.
    void Receive(Ptr<const Packet> packet);

    /**
     * \p cb runs when a transmission ends and nothing is queued.  A sender that fills
     * the device from it decides what goes next at the last possible instant, which
     * keeps its scheduling exact without queueing ahead.
     */
    void SetTxIdleCallback(Callback<void> cb);

    /// Nothing being serialized and nothing queued.
    bool IsIdle() const { return !m_transmitting && m_queue.empty(); }

    void SetDataRate(DataRate rate);
    DataRate GetDataRate() const { return m_rate; }

    /// A label for messages (e.g. "gpu0->switch0"); defaults to node and interface index.
    void SetName(const std::string& name) { m_name = name; }
    std::string GetName() const;

    /// Packets waiting behind the one being serialized.
    std::size_t GetQueueLength() const { return m_queue.size(); }

    uint64_t GetTxPackets() const { return m_txPackets; }
    uint64_t GetTxBytes() const { return m_txBytes; }
    uint64_t GetRxPackets() const { return m_rxPackets; }
    uint64_t GetRxBytes() const { return m_rxBytes; }
    /// Largest number of packets ever waiting behind the one being serialized.
    std::size_t GetMaxQueueLength() const { return m_maxQueueLength; }
    /// Sum over transmitted packets of the time each waited before serialization began.
    Time GetTotalQueueingDelay() const { return m_totalQueueingDelay; }
    /// Longest time a packet waited before serialization began.
    Time GetMaxQueueingDelay() const { return m_maxQueueingDelay; }
    /// Largest number of bytes ever waiting behind the one being serialized.
    uint64_t GetMaxQueueBytes() const { return m_maxQueueBytes; }
    /// Bytes that came in through this port and wait in the node now / at most ever.
    uint64_t GetIngressBytes() const { return m_ingressBytes; }
    uint64_t GetMaxIngressBytes() const { return m_maxIngressBytes; }
    /// The receive buffer of this port: credit buffer, or XOFF + headroom (0: unbounded).
    uint64_t GetIngressBufferBytes() const;
    /// PFC frames this port sent upstream.
    uint64_t GetPauseFramesSent() const { return m_pauseFramesSent; }
    uint64_t GetResumeFramesSent() const { return m_resumeFramesSent; }
    /// Time this device spent paused by its peer's PFC.
    Time GetPausedTime() const;
    /// Packets this device marked ECN CE.
    uint64_t GetEcnMarks() const { return m_ecnMarks; }
    /// Times a transmission had to wait for credits.
    uint64_t GetCreditStalls() const { return m_creditStalls; }

    // NetDevice
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsBridge() const override;
    bool IsPointToPoint() const override;
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet, const Address& source, const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(NetDevice::PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

protected:
    void DoDispose() override;

private:
    struct Queued
    {
        Ptr<const Packet> packet;
        Time enqueued;
        PhantoraNetDevice* ingress;
    };

    enum class IngressMode
    {
        None,
        Credit,
        Pfc
    };

    /// Starts the head of the queue if flow control lets it, else arranges to retry.
    void TryTransmit();
    bool CreditsSuffice(uint32_t bytes);
    void StartTransmission(Ptr<const Packet> packet, PhantoraNetDevice* ingress);
    void TransmitComplete();
    Ptr<const Packet> MaybeMarkEcn(Ptr<const Packet> packet);
    Time TxTime(uint32_t bytes);

    Ptr<Node> m_node;
    Ptr<PhantoraChannel> m_channel;
    Mac48Address m_address;
    Address m_peerAddress; ///< resolved on first receive; addresses are set before that
    uint32_t m_ifIndex{0};
    uint16_t m_mtu{4096};
    DataRate m_rate;
    uint32_t m_maxQueuePackets{0};
    std::string m_name;

    std::deque<Queued> m_queue;
    uint64_t m_queueBytes{0};
    bool m_transmitting{false};
    PhantoraNetDevice* m_txIngress{nullptr}; ///< ingress of the packet being serialized
    uint32_t m_txSize{0};                    ///< its size

    // Sending side flow control.
    bool m_paused{false};
    Time m_pausedSince;
    Time m_pausedTotal;
    bool m_creditLimited{false};
    uint64_t m_credits{0};
    std::deque<std::pair<Time, uint32_t>> m_pendingCredits; ///< (arrival, bytes), in time order
    EventId m_creditWait;
    uint64_t m_creditStalls{0};
    // ECN marking.
    uint32_t m_ecnKmin{0};
    uint32_t m_ecnKmax{0};
    double m_ecnPmax{0};
    bool m_ecn{false};
    uint64_t m_ecnSalt{0};
    uint64_t m_ecnMarks{0};

    // Receiving side flow control.
    IngressMode m_ingressMode{IngressMode::None};
    uint32_t m_ingressBuffer{0}; ///< credit mode: the buffer; PFC mode: XOFF
    PhantoraNetDevice* m_creditPeer{
        nullptr}; ///< credit mode: the upstream device (the channel owns it)
    Time m_creditDelay;
    uint32_t m_pfcXon{0};
    uint32_t m_pfcHeadroom{0};
    bool m_pauseSent{false};
    uint64_t m_ingressBytes{0};
    uint64_t m_maxIngressBytes{0};
    uint64_t m_pauseFramesSent{0};
    uint64_t m_resumeFramesSent{0};
    // Almost every packet has the full MTU: remembering the last size spares a 128-bit
    // division per packet while giving the very same Time.
    uint32_t m_cachedTxBytes{0};
    Time m_cachedTxTime;

    NetDevice::ReceiveCallback m_rxCallback;
    NetDevice::PromiscReceiveCallback m_promiscRxCallback;
    Callback<void> m_txIdleCallback;
    TracedCallback<> m_linkChangeCallbacks;

    uint64_t m_txPackets{0};
    uint64_t m_txBytes{0};
    uint64_t m_rxPackets{0};
    uint64_t m_rxBytes{0};
    std::size_t m_maxQueueLength{0};
    uint64_t m_maxQueueBytes{0};
    Time m_totalQueueingDelay;
    Time m_maxQueueingDelay;

    TracedCallback<Ptr<const Packet>> m_txBeginTrace;
    TracedCallback<Ptr<const Packet>> m_rxTrace;
};

} // namespace ns3

#endif
