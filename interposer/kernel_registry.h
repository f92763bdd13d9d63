// Names of the program's kernels, as registered by nvcc's generated code
// (__cudaRegisterFunction), looked up by their host stub address at launch, and the
// facts of each launch's arguments that join its key in the profile.
#pragma once

#include "cuda_abi/kernel_params.h"
#include "kernel_signature.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace phantora::interposer
{

class KernelRegistry
{
public:
    static KernelRegistry& Get();
    /// \p fatbin: what __cudaRegisterFatBinary was given for the kernel's module.
    void Register(const void* hostFun, const char* deviceName, const void* fatbin);
    /// A function of a module loaded at run time (driver_modules.h), named \p name, with
    /// the \p layout its cubin gives (null: none readable).  Its compiler (Triton, NVRTC)
    /// says nothing of which pointers it writes: every pointer parameter may be written.
    void RegisterLoaded(const void* function, const char* name,
                        const kernel_args::ParamLayout* layout);
    /// Demangled name, or a placeholder naming the address for unregistered functions.
    std::string Name(const void* hostFun) const;
    /// kernel_args::ArgFacts of a launch's \p args; empty if the layout is unknown.
    std::string ArgFacts(const void* hostFun, void* const* args)
    {
        return m_params.Facts(hostFun, args);
    }
    /// kernel_work.h WorkFacts of a launch of \p blocks blocks; empty if they say nothing.
    std::string WorkFacts(const void* hostFun, void* const* args, uint32_t blocks)
    {
        return m_params.Work(hostFun, args, blocks);
    }
    /// The kernel's parameter layout; null if unknown (no fat binary or no KPARAM_INFO).
    const kernel_args::ParamLayout* Layout(const void* hostFun) { return m_params.Find(hostFun); }
    /// kernel_signature.h's WrittenPointerParams of the kernel's name, worked out once
    /// (an unordered_map's elements stay where they are).
    const std::vector<ParamWrites>& WrittenParams(const void* hostFun);

private:
    mutable std::mutex m_mutex;
    std::unordered_map<const void*, std::string> m_names;
    std::unordered_map<const void*, std::vector<ParamWrites>> m_written;
    kernel_args::KernelParamIndex m_params;
};

} // namespace phantora::interposer
