// Device queries answered from the scenario's GPU model.
#include "cuda_state.h"
#include "device_memory.h"
#include "device_properties.h"
#include "device_query_scope.h"
#include "hook_scope.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cuda_runtime_api.h>
#include <string>

using namespace phantora;
using namespace phantora::interposer;

namespace phantora::interposer
{

/// The properties of the scenario's GPU.  Fields the scenario does not give take the
/// values of a Hopper-generation data-centre GPU, the class the scenarios describe.
void FillDeviceProperties(const wire::Welcome& w, int device, cudaDeviceProp& p)
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

} // namespace phantora::interposer

extern "C"
{

    cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device)
    {
        DeviceQueryScope scope;
        const auto& w = scope.Device();
        if (!prop)
        {
            return Status(cudaErrorInvalidValue);
        }
        if (device < 0 || device >= w.deviceCount)
        {
            return Status(cudaErrorInvalidDevice);
        }
        FillDeviceProperties(w, device, *prop);
        return cudaSuccess;
    }

    cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device)
    {
        DeviceQueryScope scope;
        const auto& w = scope.Device();
        if (!value)
        {
            return Status(cudaErrorInvalidValue);
        }
        if (device < 0 || device >= w.deviceCount)
        {
            return Status(cudaErrorInvalidDevice);
        }
        cudaDeviceProp p;
        FillDeviceProperties(w, device, p);
        switch (attr)
        {
        case cudaDevAttrMaxThreadsPerBlock:
            *value = p.maxThreadsPerBlock;
            break;
        case cudaDevAttrMaxBlockDimX:
        case cudaDevAttrMaxBlockDimY:
        case cudaDevAttrMaxBlockDimZ:
            *value = p.maxThreadsDim[attr - cudaDevAttrMaxBlockDimX];
            break;
        case cudaDevAttrMaxGridDimX:
        case cudaDevAttrMaxGridDimY:
        case cudaDevAttrMaxGridDimZ:
            *value = p.maxGridSize[attr - cudaDevAttrMaxGridDimX];
            break;
        case cudaDevAttrMaxSharedMemoryPerBlock:
            *value = static_cast<int>(p.sharedMemPerBlock);
            break;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin:
            *value = static_cast<int>(p.sharedMemPerBlockOptin);
            break;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
            *value = static_cast<int>(p.sharedMemPerMultiprocessor);
            break;
        case cudaDevAttrWarpSize:
            *value = p.warpSize;
            break;
        case cudaDevAttrMaxRegistersPerBlock:
            *value = p.regsPerBlock;
            break;
        case cudaDevAttrMaxRegistersPerMultiprocessor:
            *value = p.regsPerMultiprocessor;
            break;
        case cudaDevAttrMultiProcessorCount:
            *value = p.multiProcessorCount;
            break;
        case cudaDevAttrComputeCapabilityMajor:
            *value = p.major;
            break;
        case cudaDevAttrComputeCapabilityMinor:
            *value = p.minor;
            break;
        case cudaDevAttrMaxThreadsPerMultiProcessor:
            *value = p.maxThreadsPerMultiProcessor;
            break;
        case cudaDevAttrMaxBlocksPerMultiprocessor:
            *value = p.maxBlocksPerMultiProcessor;
            break;
        case cudaDevAttrL2CacheSize:
            *value = p.l2CacheSize;
            break;
        case cudaDevAttrGlobalMemoryBusWidth:
            *value = p.memoryBusWidth;
            break;
        case cudaDevAttrPciBusId:
            *value = p.pciBusID;
            break;
        case cudaDevAttrPciDeviceId:
        case cudaDevAttrPciDomainId:
        case cudaDevAttrIntegrated:
        case cudaDevAttrTccDriver:
            *value = 0;
            break;
        case cudaDevAttrConcurrentKernels:
        case cudaDevAttrUnifiedAddressing:
        case cudaDevAttrCanMapHostMemory:
        case cudaDevAttrManagedMemory:
        case cudaDevAttrConcurrentManagedAccess:
        case cudaDevAttrCooperativeLaunch:
        case cudaDevAttrMemoryPoolsSupported:
        case cudaDevAttrGlobalL1CacheSupported:
        case cudaDevAttrLocalL1CacheSupported:
        case cudaDevAttrStreamPrioritiesSupported:
        case cudaDevAttrEccEnabled:
        case cudaDevAttrComputePreemptionSupported:
            *value = 1;
            break;
        case cudaDevAttrAsyncEngineCount:
            *value = p.asyncEngineCount;
            break;
        case cudaDevAttrClockRate:
            // The SM clock in kHz (CUDA 13's cudaDeviceProp has none): Inductor and Triton turn
            // cycles into time with it.  Hopper SXM parts run to 1980 MHz (nvidia-smi's
            // clocks.max.sm on the measured H100 and H200, data/raw/*/H200/*/env*.txt).
            if (p.major != 9)
            {
                Fatal("cudaDeviceGetAttribute(cudaDevAttrClockRate): the simulator knows the SM "
                      "clock of Hopper GPUs only");
            }
            *value = 1980000;
            break;
        case cudaDevAttrMemoryClockRate:
        {
            // The memory clock in kHz, which Triton and Inductor multiply by the bus width for
            // the DRAM bandwidth: nvidia-smi's clocks.max.mem on the measured GPUs (H200 3201
            // MHz, H100 2619 MHz: data/raw/accuracy/H200/*/env*.txt, profiles/README.md).
            const std::string_view name(p.name);
            if (name.find("H200") != std::string_view::npos)
            {
                *value = 3201000;
            }
            else if (name.find("H100") != std::string_view::npos)
            {
                *value = 2619000;
            }
            else
            {
                Fatal("cudaDeviceGetAttribute(cudaDevAttrMemoryClockRate): the simulator knows "
                      "the memory clock of the measured H100 and H200 only, not of " +
                      std::string(name));
            }
            break;
        }
        default:
            // A wrong answer here could silently change what the program does.
            Fatal("cudaDeviceGetAttribute(" + std::to_string(static_cast<int>(attr)) +
                  ") asks for a device attribute the simulator does not model yet");
        }
        return cudaSuccess;
    }

    cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device)
    {
        DeviceQueryScope scope;
        if (!pciBusId || len <= 0 || device < 0 || device >= scope.Device().deviceCount)
        {
            return Status(cudaErrorInvalidValue);
        }
        std::snprintf(pciBusId, static_cast<size_t>(len), "0000:%02x:00.0", 0x18 + device);
        return cudaSuccess;
    }

    cudaError_t cudaDeviceCanAccessPeer(int* canAccess, int device, int peer)
    {
        DeviceQueryScope scope;
        const int n = scope.Device().deviceCount;
        if (!canAccess || device < 0 || device >= n || peer < 0 || peer >= n)
        {
            return Status(cudaErrorInvalidDevice);
        }
        // GPUs of one simulated node share the node's NVLink/PCIe fabric.
        *canAccess = device != peer ? 1 : 0;
        return cudaSuccess;
    }

    cudaError_t cudaDeviceEnablePeerAccess(int, unsigned int)
    {
        HookScope scope;
        return cudaSuccess;
    }

    cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority)
    {
        if (leastPriority)
        {
            *leastPriority = 0;
        }
        if (greatestPriority)
        {
            *greatestPriority = -5; // as on Hopper
        }
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
