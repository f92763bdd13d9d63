#include "physical_memory.h"

#include "device_memory.h"
#include "id_allocator.h"
#include "never_destroyed.h"

namespace phantora::interposer
{

namespace
{
constinit NeverDestroyed<PhysicalMemory> g_physicalMemory;
} // namespace

PhysicalMemory& PhysicalMemory::Get()
{
    return *g_physicalMemory;
}

CUmemGenericAllocationHandle PhysicalMemory::Create(std::size_t size)
{
    const CUmemGenericAllocationHandle handle = NewId(IdKind::PhysicalChunk);
    std::lock_guard lock(m_mutex);
    m_chunks[handle] = {size, 1};
    return handle;
}

bool PhysicalMemory::Release(CUmemGenericAllocationHandle handle)
{
    std::lock_guard lock(m_mutex);
    auto it = m_chunks.find(handle);
    if (it == m_chunks.end())
    {
        return false;
    }
    // The memory goes back once released and unmapped; a mapping keeps it alive.
    if (--it->second.references == 0)
    {
        bool mapped = false;
        for (const auto& [address, h] : m_mappings)
        {
            mapped = mapped || h == handle;
        }
        if (!mapped)
        {
            DeviceMemory::Get().UnchargePhysical(it->second.size);
            m_chunks.erase(it);
        }
    }
    return true;
}

bool PhysicalMemory::Map(CUdeviceptr address, CUmemGenericAllocationHandle handle)
{
    std::lock_guard lock(m_mutex);
    if (!m_chunks.count(handle))
    {
        return false;
    }
    m_mappings[address] = handle;
    return true;
}

void PhysicalMemory::Unmap(CUdeviceptr address, std::size_t size)
{
    std::lock_guard lock(m_mutex);
    for (auto it = m_mappings.lower_bound(address);
         it != m_mappings.end() && it->first < address + size;)
    {
        const CUmemGenericAllocationHandle h = it->second;
        it = m_mappings.erase(it);
        auto chunk = m_chunks.find(h);
        if (chunk != m_chunks.end() && chunk->second.references == 0)
        {
            DeviceMemory::Get().UnchargePhysical(chunk->second.size);
            m_chunks.erase(chunk);
        }
    }
}

std::optional<CUmemGenericAllocationHandle> PhysicalMemory::Retain(CUdeviceptr address)
{
    std::lock_guard lock(m_mutex);
    auto it = m_mappings.find(address);
    if (it == m_mappings.end())
    {
        return std::nullopt;
    }
    ++m_chunks[it->second].references;
    return it->second;
}

bool PhysicalMemory::Exists(CUmemGenericAllocationHandle handle) const
{
    std::lock_guard lock(m_mutex);
    return m_chunks.count(handle) > 0;
}

} // namespace phantora::interposer
