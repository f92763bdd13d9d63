// Runtime calls frameworks make around their real work: pinned host memory,
// pointer queries, stream priorities, function attributes.
// None of them costs simulated GPU time.
#include "cuda_state.h"
#include "device_memory.h"
#include "hook_scope.h"
#include "pinned_host_memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime_api.h>

using namespace phantora;
using namespace phantora::interposer;

extern "C"
{

    // Pinned host memory is real host memory: the program reads and writes it.
    cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int)
    {
        HookScope scope;
        if (!ptr)
        {
            return Status(cudaErrorInvalidValue);
        }
        *ptr = std::aligned_alloc(4096, std::max<size_t>(4096, (size + 4095) / 4096 * 4096));
        PinnedHostMemory::Get().Add(*ptr, size);
        return *ptr ? cudaSuccess : Status(cudaErrorMemoryAllocation);
    }

    cudaError_t cudaMallocHost(void** ptr, size_t size)
    {
        return cudaHostAlloc(ptr, size, 0);
    }

    cudaError_t cudaFreeHost(void* ptr)
    {
        HookScope scope;
        PinnedHostMemory::Get().Remove(ptr);
        std::free(ptr);
        return cudaSuccess;
    }

    cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int)
    {
        HookScope scope;
        PinnedHostMemory::Get().Add(ptr, size);
        return cudaSuccess;
    }

    cudaError_t cudaHostUnregister(void* ptr)
    {
        HookScope scope;
        PinnedHostMemory::Get().Remove(ptr);
        return cudaSuccess;
    }

    cudaError_t cudaHostGetDevicePointer(void** devicePtr, void* hostPtr, unsigned int)
    {
        HookScope scope;
        if (!devicePtr)
        {
            return Status(cudaErrorInvalidValue);
        }
        *devicePtr = hostPtr; // unified addressing
        return cudaSuccess;
    }

    cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr)
    {
        HookScope scope;
        if (!attributes)
        {
            return Status(cudaErrorInvalidValue);
        }
        std::memset(attributes, 0, sizeof *attributes);
        if (DeviceMemory::Get().Contains(ptr))
        {
            attributes->type = cudaMemoryTypeDevice;
            attributes->device = ThreadState().device;
            attributes->devicePointer = const_cast<void*>(ptr);
        }
        else
        {
            attributes->type = cudaMemoryTypeUnregistered;
            attributes->device = -2;
            attributes->hostPointer = const_cast<void*>(ptr);
        }
        return cudaSuccess;
    }

    cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int)
    {
        return cudaStreamCreateWithFlags(stream, flags);
    }

    cudaError_t cudaStreamGetPriority(cudaStream_t, int* priority)
    {
        if (!priority)
        {
            return Status(cudaErrorInvalidValue);
        }
        *priority = 0;
        return cudaSuccess;
    }

    cudaError_t cudaStreamGetFlags(cudaStream_t, unsigned int* flags)
    {
        if (!flags)
        {
            return Status(cudaErrorInvalidValue);
        }
        *flags = cudaStreamDefault;
        return cudaSuccess;
    }

    // Kernel resource usage is not known without the real binary: plausible values for
    // a compiled kernel, so that launch-size heuristics stay in their normal range.
    cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func)
    {
        HookScope scope;
        if (!attr || !func)
        {
            return Status(cudaErrorInvalidDeviceFunction);
        }
        std::memset(attr, 0, sizeof *attr);
        attr->maxThreadsPerBlock = 1024;
        attr->numRegs = 32;
        attr->ptxVersion = 90;
        attr->binaryVersion = 90;
        attr->maxDynamicSharedSizeBytes = 48 * 1024;
        attr->preferredShmemCarveout = -1;
        return cudaSuccess;
    }

    cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute, int)
    {
        HookScope scope;
        return func ? cudaSuccess : Status(cudaErrorInvalidDeviceFunction);
    }

    cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                              int blockSize, size_t)
    {
        HookScope scope;
        if (!numBlocks || !func || blockSize <= 0)
        {
            return Status(cudaErrorInvalidValue);
        }
        // Thread-limited occupancy of a 2048-thread, 32-block SM.
        *numBlocks = std::max(1, std::min(32, 2048 / blockSize));
        return cudaSuccess;
    }

    cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks,
                                                                       const void* func,
                                                                       int blockSize,
                                                                       size_t dynamicSMemSize,
                                                                       unsigned int)
    {
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize,
                                                             dynamicSMemSize);
    }

} // extern "C"
