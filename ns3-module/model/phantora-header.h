#ifndef PHANTORA_HEADER_H
#define PHANTORA_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief The header of every packet of the packet-level transport.
 *
 * It carries what a switch needs to forward (destination GPU, flow id for ECMP) and
 * what the receiver needs to account delivery (flow id, payload bytes).  Real fabrics
 * spend more than these few bytes per packet (Ethernet/IB/RoCE headers, CRC, NVLink
 * flit headers), so the header is zero-padded to a configurable total size: that
 * size is the per-packet wire overhead of the model.
 *
 * Wire format (network byte order), fields first, zero padding after:
 * flow id (8 bytes), source GPU (4), destination GPU (4), payload bytes (2: a packet
 * never exceeds the 16-bit Mtu), packet index within the flow (4), then 2 bytes holding
 * the total header size (low 15 bits) and ECN Congestion Experienced (top bit, set by a
 * RoCE switch whose egress queue is long), padding up to the total header size.  The
 * size travels in the header so that Deserialize() needs no out-of-band configuration.
 * The fields take 24 bytes, so any real fabric's header (IB: 26) can be modelled.
 */
class PhantoraHeader : public Header
{
public:
    /// Bytes taken by the fields; the smallest allowed serialized size.
    static constexpr uint32_t FIELD_BYTES = 8 + 4 + 4 + 2 + 4 + 2;
    /// The largest serialized size (the size field has 15 bits).
    static constexpr uint32_t MAX_BYTES = 0x7fff;

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;

    /// A header of FIELD_BYTES bytes, all fields zero.
    PhantoraHeader();

    /**
     * A header serialized as \p serializedSize bytes.
     * Throws std::invalid_argument when \p serializedSize is outside
     * [FIELD_BYTES, MAX_BYTES].
     */
    explicit PhantoraHeader(uint32_t serializedSize);

    /// Throws std::invalid_argument when \p size is outside [FIELD_BYTES, MAX_BYTES].
    void SetSerializedSize(uint32_t size);

    void SetFlowId(uint64_t flowId) { m_flowId = flowId; }
    uint64_t GetFlowId() const { return m_flowId; }
    void SetSrcGpu(uint32_t gpu) { m_srcGpu = gpu; }
    uint32_t GetSrcGpu() const { return m_srcGpu; }
    void SetDstGpu(uint32_t gpu) { m_dstGpu = gpu; }
    uint32_t GetDstGpu() const { return m_dstGpu; }
    /// At most 0xffff (the payload of one packet).
    void SetPayloadBytes(uint32_t bytes) { m_payloadBytes = bytes; }
    uint32_t GetPayloadBytes() const { return m_payloadBytes; }
    /// Index of the packet within its flow, from 0.
    void SetSeq(uint32_t seq) { m_seq = seq; }
    uint32_t GetSeq() const { return m_seq; }
    /// ECN Congestion Experienced, as in the IP header's ECN field of a RoCEv2 packet.
    void SetCe(bool ce) { m_ce = ce; }
    bool GetCe() const { return m_ce; }

    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

private:
    uint64_t m_flowId{0};
    uint32_t m_srcGpu{0};
    uint32_t m_dstGpu{0};
    uint32_t m_payloadBytes{0};
    uint32_t m_seq{0};
    uint32_t m_size{FIELD_BYTES};
    bool m_ce{false};
};

} // namespace ns3

#endif
