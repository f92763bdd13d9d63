// The entry points nvcc's generated host code calls at load time and around each
// <<<...>>> launch.  They must never reach the real runtime, which would look for
// a driver.
#include "kernel_registry.h"

#include <cstddef>
#include <cuda_runtime_api.h>
#include <deque>
#include <mutex>

namespace
{

struct CallConfiguration
{
    dim3 grid;
    dim3 block;
    size_t sharedMem{0};
    cudaStream_t stream{nullptr};
};

// <<<>>> pushes a configuration, the launch stub pops it; launches may nest
// (device-side configuration of a host stub), so a small per-thread stack.
thread_local CallConfiguration t_stack[8];
thread_local int t_depth = 0;

// The fat binary is never loaded anywhere; its handle is a cell holding what was
// registered, so that __cudaRegisterFunction knows where to read its kernel's parameters.
// Cells are never freed: the generated code keeps the handle for the program's life.
void** NewFatbinHandle(void* fatCubin)
{
    static std::mutex mutex;
    static std::deque<void*> cells;
    std::lock_guard lock(mutex);
    return &cells.emplace_back(fatCubin);
}

} // namespace

extern "C"
{

    void** __cudaRegisterFatBinary(void* fatCubin)
    {
        return NewFatbinHandle(fatCubin);
    }

    void __cudaRegisterFatBinaryEnd(void**) {}

    void __cudaUnregisterFatBinary(void**) {}

    char __cudaInitModule(void**)
    {
        return 1;
    }

    void __cudaRegisterFunction(void** fatbinHandle, const char* hostFun, char* deviceFun,
                                const char*, int, uint3*, uint3*, dim3*, dim3*, int*)
    {
        phantora::interposer::KernelRegistry::Get().Register(
            hostFun, deviceFun, fatbinHandle ? *fatbinHandle : nullptr);
    }

    void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}

    void __cudaRegisterManagedVar(void**, void**, char*, const char*, int, size_t, int, int) {}

    unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                         struct CUstream_st* stream)
    {
        if (t_depth >= 8)
        {
            return 1;
        }
        t_stack[t_depth++] = {gridDim, blockDim, sharedMem, stream};
        return 0;
    }

    cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                           void* stream)
    {
        if (t_depth == 0)
        {
            return cudaErrorMissingConfiguration;
        }
        const CallConfiguration& c = t_stack[--t_depth];
        *gridDim = c.grid;
        *blockDim = c.block;
        *sharedMem = c.sharedMem;
        *static_cast<cudaStream_t*>(stream) = c.stream;
        return cudaSuccess;
    }

    // The kernel handle is the host stub's address: KernelRegistry knows it by that.
    cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun)
    {
        *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(hostFun));
        return cudaSuccess;
    }

} // extern "C"
