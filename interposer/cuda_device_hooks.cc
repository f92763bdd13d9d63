// Device queries answered from the scenario's GPU model.
#include "cuda_state.h"
#include "device_memory.h"
#include "hook_scope.h"

#include <algorithm>
#include <cstring>
#include <cuda_runtime_api.h>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

/// The properties of the scenario's GPU.  Fields the scenario does not give take the
/// values of a Hopper-generation data-centre GPU, the class the scenarios describe.
void FillProperties(const wire::Welcome& w, int device, cudaDeviceProp& p)
{
    std::memset(&p, 0, sizeof p);
    std::strncpy(p.name, w.gpuName.c_str(), sizeof p.name - 1);
    for (int i = 0; i < 16; ++i)
    {
        // distinct per device, stable across runs
        p.uuid.bytes[i] = static_cast<char>(0x50 + (i == 15 ? device : i));
    }
    p.totalGlobalMem = w.gpuMemoryBytes;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerBlockOptin = 227 * 1024;
    p.sharedMemPerMultiprocessor = 228 * 1024;
    p.reservedSharedMemPerBlock = 1024;
    p.regsPerBlock = 65536;
    p.regsPerMultiprocessor = 65536;
    p.warpSize = 32;
    p.memPitch = 2147483647;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsDim[0] = 1024;
    p.maxThreadsDim[1] = 1024;
    p.maxThreadsDim[2] = 64;
    p.maxGridSize[0] = 2147483647;
    p.maxGridSize[1] = 65535;
    p.maxGridSize[2] = 65535;
    p.totalConstMem = 65536;
    p.major = w.ccMajor;
    p.minor = w.ccMinor;
    p.textureAlignment = 512;
    p.texturePitchAlignment = 32;
    p.multiProcessorCount = w.smCount;
    p.canMapHostMemory = 1;
    p.concurrentKernels = 1;
    p.ECCEnabled = 1;
    p.pciBusID = 0x18 + device;
    p.asyncEngineCount = 3;
    p.unifiedAddressing = 1;
    p.memoryBusWidth = 5120;
    p.l2CacheSize = 50 * 1024 * 1024;
    p.persistingL2CacheMaxSize = 30 * 1024 * 1024;
    p.maxThreadsPerMultiProcessor = 2048;
    p.maxBlocksPerMultiProcessor = 32;
    p.streamPrioritiesSupported = 1;
    p.globalL1CacheSupported = 1;
    p.localL1CacheSupported = 1;
    p.managedMemory = 1;
    p.concurrentManagedAccess = 1;
    p.computePreemptionSupported = 1;
    p.cooperativeLaunch = 1;
    p.memoryPoolsSupported = 1;
    p.gpuDirectRDMASupported = 1;
    p.clusterLaunch = w.ccMajor >= 9 ? 1 : 0;
    p.hostNumaId = -1;
    p.deviceNumaId = -1;
}

} // namespace

extern "C"
{

    cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device)
    {
        HookScope scope;
        const auto& w = scope.Client().Welcome();
        if (!prop)
        {
            return Status(cudaErrorInvalidValue);
        }
        if (device < 0 || device >= w.deviceCount)
        {
            return Status(cudaErrorInvalidDevice);
        }
        FillProperties(w, device, *prop);
        return cudaSuccess;
    }

    cudaError_t cudaMemGetInfo(size_t* free, size_t* total)
    {
        HookScope scope;
        if (!free || !total)
        {
            return Status(cudaErrorInvalidValue);
        }
        const DeviceMemory& mem = DeviceMemory::Get();
        *total = mem.Capacity();
        *free = mem.Capacity() - std::min(mem.Capacity(), mem.Used());
        return cudaSuccess;
    }

    cudaError_t cudaRuntimeGetVersion(int* version)
    {
        if (!version)
        {
            return Status(cudaErrorInvalidValue);
        }
        *version = CUDART_VERSION;
        return cudaSuccess;
    }

    cudaError_t cudaDriverGetVersion(int* version)
    {
        if (!version)
        {
            return Status(cudaErrorInvalidValue);
        }
        // The simulated machine's driver supports the runtime the program was built with.
        *version = CUDART_VERSION;
        return cudaSuccess;
    }

} // extern "C"
