// The driver's virtual memory management, as PyTorch's caching allocator uses it
// with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: a large address range is
// reserved once, and physical chunks are created and mapped into it as the segment
// grows.  Physical chunks count against the GPU's memory (and its peak) from
// cuMemCreate to cuMemRelease, as on the real device; address ranges cost nothing.
#include "device_memory.h"
#include "hook_scope.h"
#include "id_allocator.h"
#include "value_shadow.h"

#include <cuda.h>
#include <map>
#include <mutex>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

struct PhysicalChunk
{
    std::size_t size;
    int references; ///< cuMemCreate and each cuMemRetainAllocationHandle
};

std::mutex g_mutex;
std::map<CUmemGenericAllocationHandle, PhysicalChunk> g_chunks;
std::map<CUdeviceptr, CUmemGenericAllocationHandle> g_mappings; ///< mapped address -> chunk

} // namespace

extern "C"
{

    CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                 unsigned long long)
    {
        HookScope scope;
        if (!ptr || size == 0)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        // A requested address is only a hint for the real driver too.
        (void)addr;
        void* p = DeviceMemory::Get().ReserveAddresses(size, alignment);
        if (!p)
        {
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        *ptr = reinterpret_cast<CUdeviceptr>(p);
        return CUDA_SUCCESS;
    }

    CUresult cuMemAddressFree(CUdeviceptr ptr, size_t)
    {
        HookScope scope;
        return DeviceMemory::Get().ReleaseAddresses(reinterpret_cast<void*>(ptr))
                   ? CUDA_SUCCESS
                   : CUDA_ERROR_INVALID_VALUE;
    }

    CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                         const CUmemAllocationProp* prop, unsigned long long)
    {
        HookScope scope;
        if (!handle || !prop || size == 0)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (!DeviceMemory::Get().ChargePhysical(size))
        {
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        std::lock_guard lock(g_mutex);
        *handle = NewId(IdKind::PhysicalChunk);
        g_chunks[*handle] = {size, 1};
        return CUDA_SUCCESS;
    }

    CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
    {
        HookScope scope;
        std::lock_guard lock(g_mutex);
        auto it = g_chunks.find(handle);
        if (it == g_chunks.end())
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        // The memory goes back once released and unmapped; a mapping keeps it alive.
        if (--it->second.references == 0)
        {
            bool mapped = false;
            for (const auto& [address, h] : g_mappings)
            {
                mapped = mapped || h == handle;
            }
            if (!mapped)
            {
                DeviceMemory::Get().UnchargePhysical(it->second.size);
                g_chunks.erase(it);
            }
        }
        return CUDA_SUCCESS;
    }

    CUresult cuMemMap(CUdeviceptr ptr, size_t, size_t offset, CUmemGenericAllocationHandle handle,
                      unsigned long long)
    {
        HookScope scope;
        std::lock_guard lock(g_mutex);
        if (offset != 0 || !g_chunks.count(handle) ||
            !DeviceMemory::Get().Contains(reinterpret_cast<void*>(ptr)))
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        g_mappings[ptr] = handle;
        return CUDA_SUCCESS;
    }

    CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
    {
        HookScope scope;
        ValueShadow::Get().Forget(ptr, size); // what is mapped here later starts unknown
        std::lock_guard lock(g_mutex);
        // Every chunk mapped inside [ptr, ptr + size) is unmapped.
        for (auto it = g_mappings.lower_bound(ptr);
             it != g_mappings.end() && it->first < ptr + size;)
        {
            const CUmemGenericAllocationHandle h = it->second;
            it = g_mappings.erase(it);
            auto chunk = g_chunks.find(h);
            if (chunk != g_chunks.end() && chunk->second.references == 0)
            {
                DeviceMemory::Get().UnchargePhysical(chunk->second.size);
                g_chunks.erase(chunk);
            }
        }
        return CUDA_SUCCESS;
    }

    CUresult cuMemSetAccess(CUdeviceptr ptr, size_t, const CUmemAccessDesc* desc, size_t count)
    {
        HookScope scope;
        return desc && count > 0 && DeviceMemory::Get().Contains(reinterpret_cast<void*>(ptr))
                   ? CUDA_SUCCESS
                   : CUDA_ERROR_INVALID_VALUE;
    }

    CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr)
    {
        HookScope scope;
        std::lock_guard lock(g_mutex);
        auto it = g_mappings.find(reinterpret_cast<CUdeviceptr>(addr));
        if (!handle || it == g_mappings.end())
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        ++g_chunks[it->second].references;
        *handle = it->second;
        return CUDA_SUCCESS;
    }

    CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                    CUmemGenericAllocationHandle handle)
    {
        HookScope scope;
        std::lock_guard lock(g_mutex);
        if (!prop || !g_chunks.count(handle))
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *prop = {};
        prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop->location.id = 0;
        return CUDA_SUCCESS;
    }

} // extern "C"
