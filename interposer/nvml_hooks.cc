// NVML, as PyTorch uses it (c10::cuda::DriverAPI, the caching allocator's OOM
// report, ProcessGroupNCCL's topology checks): it dlopens libnvidia-ml.so.1 (our
// soname stub, which depends on this library) and looks functions up by name.
// Devices are the scenario's GPUs, named and identified as the runtime API names
// them.  Every other function nvml.h declares (nvml_functions.txt) is a generated stub
// that ends the rank naming it (generate_stubs.sh), as the other libraries' are.
#include "device_properties.h"
#include "device_query_scope.h"

#include <cstdio>
#include <cstring>
#include <cuda_runtime_api.h>
#include <string>
#include <strings.h>

using namespace phantora;
using namespace phantora::interposer;

// The NVML ABI (nvml.h is not part of the toolkit here): the few types these
// functions take.
using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr int kNvmlP2pStatusOk = 0;

struct nvmlDevice_st
{
    unsigned index;
};
using nvmlDevice_t = nvmlDevice_st*;

struct nvmlPciInfo_t
{
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
};

namespace
{

constexpr unsigned kMaxDevices = 64;
nvmlDevice_st g_devices[kMaxDevices];

unsigned DeviceCount(const char* call = __builtin_FUNCTION())
{
    if (const int without = RankClient::DeviceCountWithoutRank(); without >= 0)
    {
        return without; // a launcher under phantora-rank, or the fork server: no rank
    }
    return static_cast<unsigned>(DeviceQueryScope(call).Device().deviceCount);
}

nvmlDevice_t Device(unsigned index)
{
    g_devices[index].index = index;
    return &g_devices[index];
}

bool Valid(nvmlDevice_t d)
{
    return d && d >= g_devices && d < g_devices + kMaxDevices && d->index < DeviceCount();
}

/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from the device's cudaDeviceProp uuid.
std::string Uuid(unsigned index)
{
    cudaDeviceProp p;
    FillDeviceProperties(RankClient::Get().Welcome(), static_cast<int>(index), p);
    std::string s = "GPU-";
    for (int i = 0; i < 16; ++i)
    {
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(p.uuid.bytes[i]));
        s += hex;
        if (i == 3 || i == 5 || i == 7 || i == 9)
        {
            s += '-';
        }
    }
    return s;
}

} // namespace

extern "C"
{

    nvmlReturn_t nvmlInit_v2()
    {
        DeviceQueryScope scope;
        return NVML_SUCCESS;
    }

    nvmlReturn_t nvmlInitWithFlags(unsigned int)
    {
        return nvmlInit_v2();
    }

    nvmlReturn_t nvmlShutdown()
    {
        return NVML_SUCCESS;
    }

    const char* nvmlErrorString(nvmlReturn_t result)
    {
        switch (result)
        {
        case NVML_SUCCESS:
            return "Success";
        case NVML_ERROR_INVALID_ARGUMENT:
            return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED:
            return "Not Supported";
        case NVML_ERROR_NOT_FOUND:
            return "Not Found";
        case NVML_ERROR_INSUFFICIENT_SIZE:
            return "Insufficient Size";
        default:
            return "Unknown Error";
        }
    }

    nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version)
    {
        if (!version)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *version = CUDART_VERSION;
        return NVML_SUCCESS;
    }

    nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version)
    {
        return nvmlSystemGetCudaDriverVersion_v2(version);
    }

    nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count)
    {
        if (const int without = RankClient::DeviceCountWithoutRank(); count && without >= 0)
        {
            *count = without; // no rank (RankClient::DeviceCountWithoutRank); no HookScope
            return NVML_SUCCESS;
        }
        DeviceQueryScope scope;
        if (!count)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *count = DeviceCount();
        return NVML_SUCCESS;
    }

    nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device)
    {
        DeviceQueryScope scope;
        if (!device || index >= DeviceCount() || index >= kMaxDevices)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *device = Device(index);
        return NVML_SUCCESS;
    }

    nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* busId, nvmlDevice_t* device)
    {
        DeviceQueryScope scope;
        if (!busId || !device)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        for (unsigned i = 0; i < DeviceCount() && i < kMaxDevices; ++i)
        {
            char mine[32];
            // the runtime's cudaDeviceGetPCIBusId numbering; NVML writes 8 domain digits
            std::snprintf(mine, sizeof mine, "%02x:00.0", 0x18 + i);
            const std::size_t n = std::strlen(busId);
            if (n >= std::strlen(mine) && strcasecmp(busId + n - std::strlen(mine), mine) == 0)
            {
                *device = Device(i);
                return NVML_SUCCESS;
            }
        }
        return NVML_ERROR_NOT_FOUND;
    }

    nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device)
    {
        DeviceQueryScope scope;
        if (!uuid || !device)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        for (unsigned i = 0; i < DeviceCount() && i < kMaxDevices; ++i)
        {
            if (Uuid(i) == uuid)
            {
                *device = Device(i);
                return NVML_SUCCESS;
            }
        }
        return NVML_ERROR_NOT_FOUND;
    }

    nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length)
    {
        DeviceQueryScope scope;
        if (!Valid(device) || !uuid)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const std::string s = Uuid(device->index);
        if (length < s.size() + 1)
        {
            return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        std::memcpy(uuid, s.c_str(), s.size() + 1);
        return NVML_SUCCESS;
    }

    nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index)
    {
        DeviceQueryScope scope;
        if (!Valid(device) || !index)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *index = device->index;
        return NVML_SUCCESS;
    }

    nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length)
    {
        DeviceQueryScope scope;
        if (!Valid(device) || !name || length == 0)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        std::snprintf(name, length, "%s", scope.Device().gpuName.c_str());
        return NVML_SUCCESS;
    }

    nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci)
    {
        DeviceQueryScope scope;
        if (!Valid(device) || !pci)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        std::memset(pci, 0, sizeof *pci);
        pci->bus = 0x18 + device->index;
        std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02x:00.0", pci->bus);
        std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02x:00.0", pci->bus);
        return NVML_SUCCESS;
    }

    /// This process is the device's only user; NVML reports none while it allocates nothing
    /// through the driver outside the simulated memory.
    nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                      void*)
    {
        DeviceQueryScope scope;
        if (!Valid(device) || !count)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *count = 0;
        return NVML_SUCCESS;
    }

    nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                         void* infos)
    {
        return nvmlDeviceGetComputeRunningProcesses(device, count, infos);
    }

    // GPUs of the simulated node reach each other (NVLink or PCIe), as the runtime's
    // cudaDeviceCanAccessPeer says.
    nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int, int* status)
    {
        DeviceQueryScope scope;
        if (!Valid(a) || !Valid(b) || !status)
        {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *status = kNvmlP2pStatusOk;
        return NVML_SUCCESS;
    }

    // NVLink link-level topology and fabric (multi-node NVLink) state are not modelled
    // through NVML; callers fall back to what the runtime API says.
    nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t, unsigned int, int*)
    {
        return NVML_ERROR_NOT_SUPPORTED;
    }

    nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t, unsigned int, nvmlPciInfo_t*)
    {
        return NVML_ERROR_NOT_SUPPORTED;
    }

    nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t, void*)
    {
        return NVML_ERROR_NOT_SUPPORTED;
    }

} // extern "C"
