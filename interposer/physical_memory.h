// The driver's physical memory chunks (cuMemCreate) and where they are mapped
// (cuMemMap), as PyTorch's expandable segments use them.  A chunk counts against the
// GPU's memory (DeviceMemory) from its creation until it is both released and unmapped,
// as on the real device; a mapping keeps a released chunk alive.
#pragma once

#include <cstddef>
#include <cuda.h>
#include <map>
#include <mutex>
#include <optional>

namespace phantora::interposer
{

class PhysicalMemory
{
public:
    /// Constructed on first use, never destroyed (never_destroyed.h).
    static PhysicalMemory& Get();

    /// A new chunk of \p size bytes, already charged to DeviceMemory, with one reference.
    CUmemGenericAllocationHandle Create(std::size_t size);
    /// Drops one reference; false if \p handle names no chunk.
    bool Release(CUmemGenericAllocationHandle handle);
    /// Maps the chunk at \p address; false if \p handle names no chunk.
    bool Map(CUdeviceptr address, CUmemGenericAllocationHandle handle);
    /// Unmaps every chunk mapped inside [address, address + size).
    void Unmap(CUdeviceptr address, std::size_t size);
    /// A new reference to the chunk mapped at \p address (cuMemRetainAllocationHandle).
    std::optional<CUmemGenericAllocationHandle> Retain(CUdeviceptr address);
    bool Exists(CUmemGenericAllocationHandle handle) const;

private:
    struct Chunk
    {
        std::size_t size;
        int references; ///< cuMemCreate and each cuMemRetainAllocationHandle
    };

    mutable std::mutex m_mutex;
    std::map<CUmemGenericAllocationHandle, Chunk> m_chunks;
    std::map<CUdeviceptr, CUmemGenericAllocationHandle> m_mappings; ///< mapped address -> chunk
};

} // namespace phantora::interposer
