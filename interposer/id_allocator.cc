#include "id_allocator.h"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace phantora::interposer
{

uint64_t IdAllocator::Next()
{
    const uint64_t n = m_taken.fetch_add(1);
    if (n >= m_space.Capacity())
    {
        throw std::length_error("no " + std::string(m_space.name) + " left to hand out (" +
                                std::to_string(m_space.Capacity()) + " taken)");
    }
    return m_space.first + n * m_space.step;
}

namespace
{

constinit IdAllocator g_eventRecords{id_space::kEventRecords};
constinit IdAllocator g_hostFunctionRecords{id_space::kHostFunctionRecords};
constinit IdAllocator g_hostFunctions{id_space::kHostFunctions};
constinit IdAllocator g_streams{id_space::kStreams};
constinit IdAllocator g_perThreadStreams{id_space::kPerThreadStreams};
constinit IdAllocator g_physicalChunks{id_space::kPhysicalChunks};
static_assert(std::is_trivially_destructible_v<IdAllocator>);

IdAllocator& AllocatorOf(IdKind kind)
{
    switch (kind)
    {
    case IdKind::EventRecord:
        return g_eventRecords;
    case IdKind::HostFunctionRecord:
        return g_hostFunctionRecords;
    case IdKind::HostFunction:
        return g_hostFunctions;
    case IdKind::Stream:
        return g_streams;
    case IdKind::PerThreadStream:
        return g_perThreadStreams;
    case IdKind::PhysicalChunk:
        return g_physicalChunks;
    }
    throw std::invalid_argument("no such id kind");
}

} // namespace

uint64_t NewId(IdKind kind)
{
    return AllocatorOf(kind).Next();
}

} // namespace phantora::interposer
