// Modules and functions loaded through the driver API (cuModuleLoadData and friends):
// the elementwise kernels PyTorch compiles at run time with NVRTC (its "jiterator") and
// Triton's kernels.  No code is loaded: a module remembers which of its names it was
// asked for, a function is its name, registered with KernelRegistry under its handle, so
// that cuLaunchKernel is timed as any launch is: from the profile by name, launch shape and,
// for a cubin (Triton's), the argument facts its parameter layout gives (kernel_params.h).
#pragma once

#include "cuda_abi/kernel_params.h"

#include <cstddef>
#include <cuda.h>
#include <unordered_map>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// The driver's opaque handle types, ours: a handle is the address of one of these.
struct CUmod_st
{
    /// The image's bytes where its names can be read (PTX, a cubin), else empty.
    std::string image;
    std::vector<std::unique_ptr<struct CUfunc_st>> functions;
    /// A cubin's kernels' parameter layouts (its .nv.info KPARAM_INFO records), read at
    /// the first function asked for; empty for PTX and fat binaries.
    std::unordered_map<std::string, phantora::kernel_args::ParamLayout> layouts;
    bool layoutsRead{false};
};

struct CUfunc_st
{
    std::string name;
    CUmodule module{nullptr};
    std::map<int, int> attributes; ///< CUfunction_attribute -> value, as set by the program
};

namespace phantora::interposer
{

class DriverModules
{
public:
    static DriverModules& Get();

    /// A module for \p image (a cubin, a fat binary or NUL-terminated PTX, as
    /// cuModuleLoadData takes it).
    CUmodule Load(const void* image);
    /// False if \p module is not loaded; its functions' handles are invalid afterwards.
    bool Unload(CUmodule module);
    /// The function \p name of \p module (the same handle every time it is asked for);
    /// CUDA_ERROR_INVALID_HANDLE for an unknown module, CUDA_ERROR_NOT_FOUND when the
    /// module's image is readable (PTX, an uncompressed cubin) and does not hold the name.
    CUresult Function(CUmodule module, const char* name, CUfunction* function);
    /// Whether \p function is a live function of a loaded module.
    bool Known(CUfunction function) const;

    /// Bytes of a module image: an ELF cubin's extent, a fat binary's header plus
    /// payload, or PTX text up to its NUL; 0 when the first bytes are none of those.
    static std::size_t ImageSize(const void* image);

private:
    mutable std::mutex m_mutex;
    std::map<CUmodule, std::unique_ptr<CUmod_st>> m_modules;
    std::map<CUfunction, CUmodule> m_functions;
};

} // namespace phantora::interposer
