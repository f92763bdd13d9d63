#ifndef PHANTORA_NET_DEVICE_H
#define PHANTORA_NET_DEVICE_H

#include "ns3/address.h"
#include "ns3/callback.h"
#include "ns3/data-rate.h"
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
 * The queue is lossless: exceeding MaxQueuePackets is a fatal error rather than a
 * drop, because collective traffic has no retransmission in this model.
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
     * The packet is never modified, so forwarding can hand on the packet it received.
     */
    void Enqueue(Ptr<const Packet> packet);

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
    };

    void StartTransmission(Ptr<const Packet> packet);
    void TransmitComplete();
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
    bool m_transmitting{false};
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
    Time m_totalQueueingDelay;
    Time m_maxQueueingDelay;

    TracedCallback<Ptr<const Packet>> m_txBeginTrace;
    TracedCallback<Ptr<const Packet>> m_rxTrace;
};

} // namespace ns3

#endif
