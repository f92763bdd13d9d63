// The driver's virtual memory management, as PyTorch's caching allocator uses it
// with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: a large address range is
// reserved once, and physical chunks are created and mapped into it as the segment
// grows.  Physical chunks count against the GPU's memory (and its peak) from
// cuMemCreate to cuMemRelease, as on the real device (physical_memory.h); address
// ranges cost nothing.
#include "device_memory.h"
#include "hook_scope.h"
#include "physical_memory.h"
#include "value_shadow.h"

#include <cuda.h>

using namespace phantora;
using namespace phantora::interposer;

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
        *handle = PhysicalMemory::Get().Create(size);
        return CUDA_SUCCESS;
    }

    CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
    {
        HookScope scope;
        return PhysicalMemory::Get().Release(handle) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }

    CUresult cuMemMap(CUdeviceptr ptr, size_t, size_t offset, CUmemGenericAllocationHandle handle,
                      unsigned long long)
    {
        HookScope scope;
        if (offset != 0 || !DeviceMemory::Get().Contains(reinterpret_cast<void*>(ptr)) ||
            !PhysicalMemory::Get().Map(ptr, handle))
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        return CUDA_SUCCESS;
    }

    CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
    {
        HookScope scope;
        ValueShadow::Get().Forget(ptr, size); // what is mapped here later starts unknown
        PhysicalMemory::Get().Unmap(ptr, size);
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
        if (!handle)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        const auto retained = PhysicalMemory::Get().Retain(reinterpret_cast<CUdeviceptr>(addr));
        if (!retained)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *handle = *retained;
        return CUDA_SUCCESS;
    }

    CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                    CUmemGenericAllocationHandle handle)
    {
        HookScope scope;
        if (!prop || !PhysicalMemory::Get().Exists(handle))
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
