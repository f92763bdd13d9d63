#include "phantora-header.h"

#include "ns3/assert.h"
#include "ns3/log.h"

#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PhantoraHeader");
NS_OBJECT_ENSURE_REGISTERED(PhantoraHeader);

TypeId PhantoraHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PhantoraHeader")
                            .SetParent<Header>()
                            .SetGroupName("Phantora")
                            .AddConstructor<PhantoraHeader>();
    return tid;
}

TypeId PhantoraHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

PhantoraHeader::PhantoraHeader() = default;

PhantoraHeader::PhantoraHeader(uint32_t serializedSize)
{
    SetSerializedSize(serializedSize);
}

void PhantoraHeader::SetSerializedSize(uint32_t size)
{
    if (size < FIELD_BYTES || size > MAX_BYTES)
    {
        throw std::invalid_argument("PhantoraHeader: header size " + std::to_string(size) +
                                    " bytes is outside [" + std::to_string(FIELD_BYTES) + ", " +
                                    std::to_string(MAX_BYTES) + "]; the fields alone take " +
                                    std::to_string(FIELD_BYTES) + " bytes");
    }
    m_size = size;
}

uint32_t PhantoraHeader::GetSerializedSize() const
{
    return m_size;
}

void PhantoraHeader::Serialize(Buffer::Iterator start) const
{
    NS_ASSERT_MSG(m_payloadBytes <= 0xffff,
                  "PhantoraHeader: payload " << m_payloadBytes << " B exceeds 16 bits");
    start.WriteHtonU64(m_flowId);
    start.WriteHtonU32(m_srcGpu);
    start.WriteHtonU32(m_dstGpu);
    start.WriteHtonU16(static_cast<uint16_t>(m_payloadBytes));
    start.WriteHtonU32(m_seq);
    start.WriteHtonU16(static_cast<uint16_t>(m_size | (m_ce ? 0x8000U : 0U)));
    start.WriteU8(0, m_size - FIELD_BYTES);
}

uint32_t PhantoraHeader::Deserialize(Buffer::Iterator start)
{
    m_flowId = start.ReadNtohU64();
    m_srcGpu = start.ReadNtohU32();
    m_dstGpu = start.ReadNtohU32();
    m_payloadBytes = start.ReadNtohU16();
    m_seq = start.ReadNtohU32();
    const uint32_t sizeAndCe = start.ReadNtohU16();
    m_ce = (sizeAndCe & 0x8000U) != 0;
    const uint32_t size = sizeAndCe & 0x7fffU;
    NS_ASSERT_MSG(size >= FIELD_BYTES,
                  "PhantoraHeader: corrupt header size " << size << " on the wire");
    m_size = size;
    // The padding carries nothing; the returned size makes PeekHeader/RemoveHeader skip it.
    return m_size;
}

void PhantoraHeader::Print(std::ostream& os) const
{
    os << "flow=" << m_flowId << " gpu" << m_srcGpu << "->gpu" << m_dstGpu << " seq=" << m_seq
       << " payload=" << m_payloadBytes << " header=" << m_size << (m_ce ? " CE" : "");
}

} // namespace ns3
