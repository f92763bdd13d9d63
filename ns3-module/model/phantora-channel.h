#ifndef PHANTORA_CHANNEL_H
#define PHANTORA_CHANNEL_H

#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <string>

namespace ns3
{

class PhantoraNetDevice;
class Packet;

/**
 * \ingroup phantora
 * \brief A full-duplex point-to-point link between exactly two PhantoraNetDevices.
 *
 * Each direction is independent: the sending device owns the serialization of its
 * direction, the channel only adds the propagation delay.  The kind ("nvlink",
 * "pcie", "ib", "roce", "ethernet") is kept so that later models (credits, PFC,
 * link-layer overheads) can differ by link type without another lookup.
 */
class PhantoraChannel : public Channel
{
public:
    static TypeId GetTypeId();
    PhantoraChannel();

    /// Connects \p device to this channel; a third device throws std::logic_error.
    void Attach(Ptr<PhantoraNetDevice> device);

    /**
     * Called by \p src when it starts serializing \p packet, which takes \p txTime:
     * the peer receives it once the last bit has crossed, txTime + delay from now.
     */
    void TransmitStart(Ptr<const Packet> packet, const PhantoraNetDevice* src, Time txTime);

    /// The device at the other end from \p device.
    Ptr<PhantoraNetDevice> GetPeer(const PhantoraNetDevice* device) const;

    Time GetDelay() const { return m_delay; }
    const std::string& GetKind() const { return m_kind; }

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;
    Ptr<PhantoraNetDevice> GetPhantoraDevice(std::size_t i) const;

protected:
    void DoDispose() override;

private:
    Time m_delay;
    std::string m_kind;
    Ptr<PhantoraNetDevice> m_devices[2];
    std::size_t m_nDevices{0};
};

} // namespace ns3

#endif
