// The CUDA driver API, as frameworks reach it: through cudaGetDriverEntryPoint /
// cuGetProcAddress (PyTorch's c10::cuda::DriverAPI, NVRTC kernels) or by linking
// libcuda.so.1.  The functions a framework needs to start and run are answered
// from the same virtual devices, memory and streams as the runtime API; every
// other driver export is a generated loud failure (generate_stubs.sh), and the
// table in driver_table.h hands out whichever of the two a name asks for.
#include "cuda_state.h"
#include "device_memory.h"
#include "driver_table.h"
#include "device_query_scope.h"
#include "hook_scope.h"
#include "protocol/streams.h"
#include "unimplemented.h"
#include "value_shadow.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

using namespace phantora;
using namespace phantora::interposer;

// A non-null context handle: one primary context per device, never a real one.
struct CUctx_st
{
    int device;
};

namespace phantora::interposer
{

namespace
{

// ABI versions introduced after 12.0: a program asking for an older version gets the
// previous symbol, as the real driver's per-version table gives it.
struct LateVersion
{
    std::string_view symbol;
    int introduced;
    std::string_view previous;
};
constexpr LateVersion kLateVersions[] = {
    {"cuCtxCreate_v4", 12050, "cuCtxCreate_v2"},
    {"cuMemAdvise_v2", 12020, "cuMemAdvise"},
    {"cuGraphAddNode_v2", 12030, "cuGraphAddNode"},
    {"cuGraphGetEdges_v2", 12030, "cuGraphGetEdges"},
    {"cuGraphNodeGetDependencies_v2", 12030, "cuGraphNodeGetDependencies"},
    {"cuGraphNodeGetDependentNodes_v2", 12030, "cuGraphNodeGetDependentNodes"},
    {"cuGraphAddDependencies_v2", 12030, "cuGraphAddDependencies"},
    {"cuGraphRemoveDependencies_v2", 12030, "cuGraphRemoveDependencies"},
    {"cuEventElapsedTime_v2", 12080, "cuEventElapsedTime"},
    {"cuGraphAddKernelNode_v2", 12000, "cuGraphAddKernelNode"},
};

const std::unordered_map<std::string_view, void*>& Functions()
{
    static const auto table = []
    {
        std::unordered_map<std::string_view, void*> t;
        for (std::size_t i = 0; i < kDriverFunctionCount; ++i)
        {
            t.emplace(kDriverFunctions[i].name, kDriverFunctions[i].address);
        }
        return t;
    }();
    return table;
}

const std::unordered_map<std::string_view, std::string_view>& Aliases()
{
    static const auto table = []
    {
        std::unordered_map<std::string_view, std::string_view> t;
        for (std::size_t i = 0; i < kDriverAliasCount; ++i)
        {
            t.emplace(kDriverAliases[i].api, kDriverAliases[i].symbol);
        }
        return t;
    }();
    return table;
}

CUctx_st g_contexts[64];

int DeviceCount(const char* call = __builtin_FUNCTION())
{
    if (const int without = RankClient::DeviceCountWithoutRank(); without >= 0)
    {
        return without; // a launcher under phantora-rank, or the fork server: no rank
    }
    return DeviceQueryScope(call).Device().deviceCount;
}

} // namespace

void* FindDriverFunction(const char* api, int cudaVersion)
{
    if (!api)
    {
        return nullptr;
    }
    std::string_view symbol = api;
    if (auto a = Aliases().find(symbol); a != Aliases().end())
    {
        symbol = a->second;
    }
    for (const LateVersion& late : kLateVersions)
    {
        if (late.symbol == symbol && cudaVersion < late.introduced)
        {
            symbol = late.previous;
        }
    }
    auto f = Functions().find(symbol);
    return f == Functions().end() ? nullptr : f->second;
}

} // namespace phantora::interposer

extern "C"
{

    CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t,
                              CUdriverProcAddressQueryResult* status)
    {
        if (!symbol || !pfn)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *pfn = FindDriverFunction(symbol, cudaVersion);
        if (status)
        {
            *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        }
        return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
    }

    cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                                 unsigned int cudaVersion, unsigned long long,
                                                 cudaDriverEntryPointQueryResult* status)
    {
        if (!symbol || !funcPtr)
        {
            return Status(cudaErrorInvalidValue);
        }
        *funcPtr = FindDriverFunction(symbol, static_cast<int>(cudaVersion));
        if (status)
        {
            *status = *funcPtr ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
        }
        return cudaSuccess;
    }

    cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr,
                                        unsigned long long flags,
                                        cudaDriverEntryPointQueryResult* status)
    {
        return cudaGetDriverEntryPointByVersion(symbol, funcPtr, CUDART_VERSION, flags, status);
    }

    // The driver's private interfaces (what CUPTI, and so torch.profiler's CUDA activity,
    // reaches for) do not exist on a simulated GPU.  Refusing them, rather than ending the
    // rank, lets a training script that profiles a few steps run on: CUPTI reports that it
    // could not start and the profiler carries on with CPU ops alone.  Their durations are
    // the host's real time (PyTorch reads the processor's time-stamp counter, which no
    // library call can virtualise), so the notice says so.
    CUresult cuGetExportTable(const void** table, const CUuuid*)
    {
        static std::atomic<bool> noted{false};
        if (!noted.exchange(true))
        {
            std::fprintf(stderr,
                         "phantora interposer: cuGetExportTable (the driver's private tables, "
                         "which CUPTI and profilers use) is not simulated; answered "
                         "CUDA_ERROR_NOT_SUPPORTED, so GPU activity tracing is off in this rank "
                         "(a profiler's CPU-op durations are this host's real time, not "
                         "simulated time; the program's own clock reads are simulated); asked "
                         "for by %s\n",
                         Callers(1).c_str());
        }
        if (table)
        {
            *table = nullptr;
        }
        return CUDA_ERROR_NOT_SUPPORTED;
    }

    CUresult cuInit(unsigned int)
    {
        return CUDA_SUCCESS;
    }

    CUresult cuDriverGetVersion(int* version)
    {
        if (!version)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *version = CUDA_VERSION;
        return CUDA_SUCCESS;
    }

    CUresult cuGetErrorString(CUresult error, const char** str)
    {
        if (!str)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        // The runtime's error of the same number has the same meaning for the common ones.
        *str = error == CUDA_SUCCESS ? "no error"
                                     : cudaGetErrorString(static_cast<cudaError_t>(error));
        return CUDA_SUCCESS;
    }

    CUresult cuGetErrorName(CUresult error, const char** str)
    {
        if (!str)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *str = error == CUDA_SUCCESS ? "CUDA_SUCCESS"
                                     : cudaGetErrorName(static_cast<cudaError_t>(error));
        return CUDA_SUCCESS;
    }

    CUresult cuDeviceGetCount(int* count)
    {
        if (const int without = RankClient::DeviceCountWithoutRank(); count && without >= 0)
        {
            *count = without; // no rank (RankClient::DeviceCountWithoutRank); no HookScope
            return CUDA_SUCCESS;
        }
        DeviceQueryScope scope;
        if (!count)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *count = scope.Device().deviceCount;
        return CUDA_SUCCESS;
    }

    CUresult cuDeviceGet(CUdevice* device, int ordinal)
    {
        DeviceQueryScope scope;
        if (!device)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (ordinal < 0 || ordinal >= DeviceCount())
        {
            return CUDA_ERROR_INVALID_DEVICE;
        }
        *device = ordinal;
        return CUDA_SUCCESS;
    }

    // CUdevice_attribute and cudaDeviceAttr number the attributes alike, but for a few
    // the runtime has no name for: Hopper's virtual memory management capabilities.
    CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attr, CUdevice device)
    {
        switch (attr)
        {
        case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED:
        {
            DeviceQueryScope scope;
            if (!value || device < 0 || device >= scope.Device().deviceCount)
            {
                return CUDA_ERROR_INVALID_VALUE;
            }
            *value = attr == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED ||
                             attr == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED
                         ? 0
                         : 1;
            return CUDA_SUCCESS;
        }
        default:
            break;
        }
        const cudaError_t e =
            cudaDeviceGetAttribute(value, static_cast<cudaDeviceAttr>(attr), device);
        return e == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }

    CUresult cuDeviceGetName(char* name, int len, CUdevice device)
    {
        cudaDeviceProp p;
        if (!name || len <= 0 || cudaGetDeviceProperties(&p, device) != cudaSuccess)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        std::strncpy(name, p.name, static_cast<std::size_t>(len) - 1);
        name[len - 1] = '\0';
        return CUDA_SUCCESS;
    }

    CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device)
    {
        cudaDeviceProp p;
        if (!uuid || cudaGetDeviceProperties(&p, device) != cudaSuccess)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        std::memcpy(uuid->bytes, p.uuid.bytes, sizeof uuid->bytes);
        return CUDA_SUCCESS;
    }

    CUresult cuDeviceTotalMem(size_t* bytes, CUdevice device)
    {
        DeviceQueryScope scope;
        if (!bytes || device < 0 || device >= scope.Device().deviceCount)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *bytes = scope.Device().gpuMemoryBytes;
        return CUDA_SUCCESS;
    }

    CUresult cuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active)
    {
        DeviceQueryScope scope;
        if (!flags || !active || device < 0 || device >= scope.Device().deviceCount)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        // The runtime creates the primary context on first use; ours always exists.
        *flags = 0;
        *active = 1;
        return CUDA_SUCCESS;
    }

    CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device)
    {
        HookScope scope;
        if (!ctx || device < 0 || device >= DeviceCount() || device >= 64)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        g_contexts[device].device = device;
        *ctx = &g_contexts[device];
        return CUDA_SUCCESS;
    }

    CUresult cuDevicePrimaryCtxRelease(CUdevice)
    {
        return CUDA_SUCCESS;
    }

    CUresult cuCtxGetCurrent(CUcontext* ctx)
    {
        if (!ctx)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        const int device = ThreadState().device;
        g_contexts[device].device = device;
        *ctx = &g_contexts[device];
        return CUDA_SUCCESS;
    }

    CUresult cuCtxSetCurrent(CUcontext ctx)
    {
        if (ctx)
        {
            const int device = ctx->device;
            if (device < 0 || device >= 64)
            {
                return CUDA_ERROR_INVALID_CONTEXT;
            }
            ThreadState().device = device;
        }
        return CUDA_SUCCESS;
    }

    CUresult cuCtxGetDevice(CUdevice* device)
    {
        if (!device)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *device = ThreadState().device;
        return CUDA_SUCCESS;
    }

    CUresult cuCtxSynchronize()
    {
        return cudaDeviceSynchronize() == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
    }

    CUresult cuMemGetAddressRange(CUdeviceptr* base, size_t* size, CUdeviceptr ptr)
    {
        HookScope scope;
        uintptr_t b = 0;
        std::size_t s = 0;
        if (!DeviceMemory::Get().Range(reinterpret_cast<const void*>(ptr), b, s))
        {
            return CUDA_ERROR_NOT_FOUND;
        }
        if (base)
        {
            *base = b;
        }
        if (size)
        {
            *size = s;
        }
        return CUDA_SUCCESS;
    }

    CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr)
    {
        HookScope scope;
        if (!data)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        const void* p = reinterpret_cast<const void*>(ptr);
        if (!DeviceMemory::Get().Contains(p))
        {
            return CUDA_ERROR_INVALID_VALUE; // as for host memory the driver does not know
        }
        uintptr_t base = 0;
        std::size_t size = 0;
        switch (attribute)
        {
        case CU_POINTER_ATTRIBUTE_CONTEXT:
            return cuCtxGetCurrent(static_cast<CUcontext*>(data));
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *static_cast<unsigned int*>(data) = CU_MEMORYTYPE_DEVICE;
            return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
            *static_cast<CUdeviceptr*>(data) = ptr;
            return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
            *static_cast<int*>(data) = ThreadState().device;
            return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            if (!DeviceMemory::Get().Range(p, base, size))
            {
                return CUDA_ERROR_INVALID_VALUE;
            }
            if (attribute == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
            {
                *static_cast<CUdeviceptr*>(data) = base;
            }
            else
            {
                *static_cast<std::size_t*>(data) = size;
            }
            return CUDA_SUCCESS;
        default:
            Fatal("cuPointerGetAttribute(" + std::to_string(static_cast<int>(attribute)) +
                  ") asks for a pointer attribute the simulator does not model yet");
        }
    }

    // The granularity of Hopper's virtual memory management.
    CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                           CUmemAllocationGranularity_flags)
    {
        if (!granularity || !prop)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *granularity = std::size_t{2} << 20;
        return CUDA_SUCCESS;
    }

    // A 4-byte write by the GPU's copy engine: timed as a tiny memset on the stream.
    CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int)
    {
        HookScope scope;
        ValueShadow::Get().Write(addr, &value, sizeof value);
        scope.Client().Post(wire::Memcpy{StreamId(stream), wire::CopyKind::Memset, 4, false});
        return CUDA_SUCCESS;
    }

    CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream stream)
    {
        HookScope scope;
        if (!DeviceMemory::Get().Contains(reinterpret_cast<const void*>(dst)))
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (n * 4 <= ValueShadow::kMaxBytes)
        {
            const std::vector<unsigned int> words(n, value);
            ValueShadow::Get().Write(dst, words.data(), n * 4);
        }
        else
        {
            ValueShadow::Get().Forget(dst, n * 4);
        }
        scope.Client().Post(wire::Memcpy{StreamId(stream), wire::CopyKind::Memset, n * 4, false});
        return CUDA_SUCCESS;
    }

} // extern "C"
