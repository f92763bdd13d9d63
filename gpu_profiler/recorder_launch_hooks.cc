// The runtime entry points through which a program registers and launches its kernels,
// preloaded in front of the real libcudart: registration tells where each kernel's
// parameter layout is, a launch is tagged with its argument facts (recorder_launch_args.h).
// A program linked with the static runtime (nvcc's default) calls none of these: its
// kernels are keyed by launch shape alone, as before.
#include "cuda_abi/elf_sections.h"
#include "cuda_abi/kernel_params.h"
#include "host_time/host_boundary.h"
#include "recorder_host_gaps.h"
#include "recorder_launch_args.h"
#include "recorder_real_symbol.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace
{

struct LaunchTags
{
    std::mutex mutex;
    /// Modules loaded through the driver API (Triton's cubins): their kernels' layouts.
    std::map<CUmodule, std::unordered_map<std::string, phantora::kernel_args::ParamLayout>>
        moduleLayouts;
    std::map<void**, const void*> fatbinOf;                    ///< handle -> what was registered
    std::unordered_map<const void*, const void*> hostOfKernel; ///< __cudaGetKernel's handles
    std::map<std::string, uint64_t> idOfFacts;
    std::vector<std::string> factsOfId{std::string()}; ///< id 0 names nothing
    phantora::kernel_args::KernelParamIndex params;
};

/// The argument-facts id of the launch this thread is making (0: none), for the graph
/// node a launch inside stream capture creates (CurrentLaunchArgs).
thread_local uint64_t t_currentArgs = 0;

LaunchTags& T()
{
    static LaunchTags* t = new LaunchTags; // never destroyed: launches may come during exit
    return *t;
}

/// The real runtime's entry point (the program's, or the one PyTorch brought in).
template <class F> F RealCudart(const char* name)
{
    return phantora::recorder::RealSymbol<F>(name,
                                             {"libcudart.so.13", "libcudart.so.12", "libcudart.so"});
}

/// Tags the activities of one launch with its argument facts, if they are known.
class ArgsTag
{
public:
    ArgsTag(const void* hostFun, void** args)
    {
        if (phantora::recorder::HostOnly())
        {
            return; // no CUPTI in the host-time pass
        }
        LaunchTags& t = T();
        std::string facts = t.params.Facts(hostFun, args);
        if (facts.empty())
        {
            return;
        }
        {
            std::lock_guard lock(t.mutex);
            auto [it, added] = t.idOfFacts.try_emplace(std::move(facts), t.factsOfId.size());
            if (added)
            {
                t.factsOfId.push_back(it->first);
            }
            m_id = it->second;
        }
        cuptiActivityPushExternalCorrelationId(phantora::recorder::kArgsCorrelation, m_id);
        m_previous = std::exchange(t_currentArgs, m_id);
    }
    ~ArgsTag()
    {
        if (m_id != 0)
        {
            t_currentArgs = m_previous;
            uint64_t id = 0;
            cuptiActivityPopExternalCorrelationId(phantora::recorder::kArgsCorrelation, &id);
        }
    }
    ArgsTag(const ArgsTag&) = delete;
    ArgsTag& operator=(const ArgsTag&) = delete;

private:
    uint64_t m_id{0};
    uint64_t m_previous{0};
};

using KernelLaunchFn = cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);

const void* HostOfKernel(cudaKernel_t kernel)
{
    LaunchTags& t = T();
    std::lock_guard lock(t.mutex);
    auto it = t.hostOfKernel.find(kernel);
    return it == t.hostOfKernel.end() ? nullptr : it->second;
}

/// \p caller: the program's call site (the hook's return address).
cudaError_t TaggedLaunch(KernelLaunchFn real, cudaKernel_t kernel, dim3 grid, dim3 block,
                         void** args, size_t sharedMem, cudaStream_t stream, const void* caller)
{
    const void* hostFun = HostOfKernel(kernel);
    phantora::recorder::HostBoundary boundary(
        [hostFun]
        { return phantora::host_time::boundary::Launch(phantora::recorder::KernelName(hostFun)); },
        caller);
    ArgsTag tag(hostFun, args);
    return real(kernel, grid, block, args, sharedMem, stream);
}

} // namespace

namespace phantora::recorder
{

uint64_t CurrentLaunchArgs()
{
    return t_currentArgs;
}

std::string LaunchArgsOf(uint64_t id)
{
    LaunchTags& t = T();
    std::lock_guard lock(t.mutex);
    return id < t.factsOfId.size() ? t.factsOfId[id] : std::string();
}

} // namespace phantora::recorder

namespace
{

/// Whether each driver-API launch of this thread being traced pushed a tag (the enter and
/// exit callbacks of one call come on the calling thread).
thread_local std::vector<bool> t_driverTags;
/// t_currentArgs before each tagged driver-API launch of this thread.
thread_local std::vector<uint64_t> t_driverPreviousArgs;

void OnModuleLoaded(CUmodule module, const void* image)
{
    const std::size_t size = phantora::kernel_args::ElfImageSize(image);
    if (!module || size == 0)
    {
        return; // PTX or a fat binary (NVRTC's): keyed by launch shape, as the simulator keys it
    }
    auto layouts = phantora::kernel_args::ParamLayoutsOf(
        std::string_view(static_cast<const char*>(image), size));
    LaunchTags& t = T();
    std::lock_guard lock(t.mutex);
    t.moduleLayouts[module] = std::move(layouts);
}

void OnFunction(CUfunction function, CUmodule module, const char* name)
{
    if (!function || !name)
    {
        return;
    }
    LaunchTags& t = T();
    std::optional<phantora::kernel_args::ParamLayout> layout;
    {
        std::lock_guard lock(t.mutex);
        auto m = t.moduleLayouts.find(module);
        if (m == t.moduleLayouts.end())
        {
            return;
        }
        auto l = m->second.find(name);
        if (l == m->second.end())
        {
            return;
        }
        layout = l->second;
    }
    t.params.AddLayout(function, name, std::move(*layout));
}

void OnLaunchEnter(CUfunction function, void** args)
{
    LaunchTags& t = T();
    uint64_t id = 0;
    if (std::string facts = args ? t.params.Facts(function, args) : std::string(); !facts.empty())
    {
        std::lock_guard lock(t.mutex);
        auto [it, added] = t.idOfFacts.try_emplace(std::move(facts), t.factsOfId.size());
        if (added)
        {
            t.factsOfId.push_back(it->first);
        }
        id = it->second;
    }
    if (id != 0)
    {
        cuptiActivityPushExternalCorrelationId(phantora::recorder::kArgsCorrelation, id);
        t_driverPreviousArgs.push_back(std::exchange(t_currentArgs, id));
    }
    t_driverTags.push_back(id != 0);
}

void OnLaunchExit()
{
    if (t_driverTags.empty())
    {
        return;
    }
    if (t_driverTags.back())
    {
        uint64_t id = 0;
        cuptiActivityPopExternalCorrelationId(phantora::recorder::kArgsCorrelation, &id);
        t_currentArgs = t_driverPreviousArgs.back();
        t_driverPreviousArgs.pop_back();
    }
    t_driverTags.pop_back();
}

} // namespace

namespace phantora::recorder
{

void OnDriverApi(CUpti_CallbackId id, const CUpti_CallbackData* cb)
{
    const bool enter = cb->callbackSite == CUPTI_API_ENTER;
    switch (id)
    {
    case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData:
        if (!enter)
        {
            const auto* p = static_cast<const cuModuleLoadData_params*>(cb->functionParams);
            OnModuleLoaded(p->module ? *p->module : nullptr, p->image);
        }
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx:
        if (!enter)
        {
            const auto* p = static_cast<const cuModuleLoadDataEx_params*>(cb->functionParams);
            OnModuleLoaded(p->module ? *p->module : nullptr, p->image);
        }
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction:
        if (!enter)
        {
            const auto* p = static_cast<const cuModuleGetFunction_params*>(cb->functionParams);
            OnFunction(p->hfunc ? *p->hfunc : nullptr, p->hmod, p->name);
        }
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
        if (enter)
        {
            const auto* p = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
            OnLaunchEnter(p->f, p->kernelParams);
        }
        else
        {
            OnLaunchExit();
        }
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
        if (enter)
        {
            const auto* p = static_cast<const cuLaunchKernelEx_params*>(cb->functionParams);
            OnLaunchEnter(p->f, p->kernelParams);
        }
        else
        {
            OnLaunchExit();
        }
        break;
    default:
        break;
    }
}

} // namespace phantora::recorder

extern "C"
{

    void** __cudaRegisterFatBinary(void* fatCubin)
    {
        static auto real = RealCudart<void** (*)(void*)>("__cudaRegisterFatBinary");
        void** handle = real(fatCubin);
        LaunchTags& t = T();
        std::lock_guard lock(t.mutex);
        t.fatbinOf[handle] = fatCubin;
        return handle;
    }

    void __cudaRegisterFunction(void** handle, const char* hostFun, char* deviceFun,
                                const char* deviceName, int threadLimit, uint3* tid, uint3* bid,
                                dim3* bDim, dim3* gDim, int* wSize)
    {
        using Fn = void (*)(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*,
                            dim3*, int*);
        static auto real = RealCudart<Fn>("__cudaRegisterFunction");
        real(handle, hostFun, deviceFun, deviceName, threadLimit, tid, bid, bDim, gDim, wSize);
        phantora::recorder::RememberKernelName(hostFun, deviceFun);
        LaunchTags& t = T();
        const void* fatbin = nullptr;
        {
            std::lock_guard lock(t.mutex);
            auto it = t.fatbinOf.find(handle);
            fatbin = it == t.fatbinOf.end() ? nullptr : it->second;
        }
        t.params.Add(hostFun, fatbin, deviceFun);
    }

    cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun)
    {
        static auto real =
            RealCudart<cudaError_t (*)(cudaKernel_t*, const void*)>("__cudaGetKernel");
        const cudaError_t rc = real(kernel, hostFun);
        if (rc == cudaSuccess && kernel)
        {
            LaunchTags& t = T();
            std::lock_guard lock(t.mutex);
            t.hostOfKernel[*kernel] = hostFun;
        }
        return rc;
    }

    cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
                                 size_t sharedMem, cudaStream_t stream)
    {
        static auto real = RealCudart<decltype(&cudaLaunchKernel)>("cudaLaunchKernel");
        phantora::recorder::HostBoundary boundary(
            [func]
            { return phantora::host_time::boundary::Launch(phantora::recorder::KernelName(func)); },
            __builtin_return_address(0));
        ArgsTag tag(func, args);
        return real(func, grid, block, args, sharedMem, stream);
    }

    cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                   size_t sharedMem, cudaStream_t stream)
    {
        static auto real = RealCudart<KernelLaunchFn>("__cudaLaunchKernel");
        return TaggedLaunch(real, kernel, grid, block, args, sharedMem, stream,
                            __builtin_return_address(0));
    }

    cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                        size_t sharedMem, cudaStream_t stream)
    {
        static auto real = RealCudart<KernelLaunchFn>("__cudaLaunchKernel_ptsz");
        return TaggedLaunch(real, kernel, grid, block, args, sharedMem, stream,
                            __builtin_return_address(0));
    }

} // extern "C"
