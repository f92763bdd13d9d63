// The driver API's modules, functions and kernel launches (driver_modules.h): what
// PyTorch's NVRTC-compiled elementwise kernels and Triton's kernels go through.  A
// launch is posted as any kernel launch is (kernel_launch.h), named by the function.
#include "cuda_state.h"
#include "driver_modules.h"
#include "hook_scope.h"
#include "kernel_launch.h"

#include <cstdio>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fstream>
#include <iterator>
#include <string>

using namespace phantora::interposer;

namespace
{

CUresult LaunchResult(cudaError_t e)
{
    return e == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/// Values a compiled kernel would report; what the program set wins.
int FunctionAttribute(const CUfunc_st& f, CUfunction_attribute attribute)
{
    if (auto it = f.attributes.find(attribute); it != f.attributes.end())
    {
        return it->second;
    }
    switch (attribute)
    {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        return 1024;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
        return 32;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
        return 90;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        return 48 * 1024;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        return -1;
    default:
        return 0; // static shared, constant and local (spill) bytes, cache mode, clusters
    }
}

} // namespace

extern "C"
{

    CUresult cuModuleLoadData(CUmodule* module, const void* image)
    {
        HookScope scope;
        if (!module || !image)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        *module = DriverModules::Get().Load(image);
        return CUDA_SUCCESS;
    }

    // The JIT options (log buffers, optimisation level) concern a compilation that does
    // not happen here: the log buffers are left as the caller gave them.
    CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, CUjit_option*,
                                void**)
    {
        return cuModuleLoadData(module, image);
    }

    CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin)
    {
        return cuModuleLoadData(module, fatCubin);
    }

    CUresult cuModuleLoad(CUmodule* module, const char* path)
    {
        if (!path)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        std::ifstream in(path, std::ios::binary);
        if (!in)
        {
            return CUDA_ERROR_FILE_NOT_FOUND;
        }
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return cuModuleLoadData(module, bytes.c_str());
    }

    CUresult cuModuleUnload(CUmodule module)
    {
        HookScope scope;
        return DriverModules::Get().Unload(module) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    }

    CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name)
    {
        HookScope scope;
        if (!function || !name)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        return DriverModules::Get().Function(module, name, function);
    }

    CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction function)
    {
        HookScope scope;
        if (!value)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (!DriverModules::Get().Known(function))
        {
            return CUDA_ERROR_INVALID_HANDLE;
        }
        *value = FunctionAttribute(*function, attribute);
        return CUDA_SUCCESS;
    }

    CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value)
    {
        HookScope scope;
        if (!DriverModules::Get().Known(function))
        {
            return CUDA_ERROR_INVALID_HANDLE;
        }
        function->attributes[attribute] = value;
        return CUDA_SUCCESS;
    }

    CUresult cuFuncSetCacheConfig(CUfunction function, CUfunc_cache)
    {
        HookScope scope;
        return DriverModules::Get().Known(function) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    }

    CUresult cuLaunchKernel(CUfunction function, unsigned int gridX, unsigned int gridY,
                            unsigned int gridZ, unsigned int blockX, unsigned int blockY,
                            unsigned int blockZ, unsigned int sharedMemBytes, CUstream stream,
                            void** kernelParams, void** extra)
    {
        if (!DriverModules::Get().Known(function))
        {
            return CUDA_ERROR_INVALID_HANDLE;
        }
        (void)extra; // the packed-buffer form of the arguments: no facts are read from either
        // No host-time boundary: the recorder cuts none at a driver-API launch, so the
        // recorded gap around Triton's launches holds their host time (host_time.h).
        return LaunchResult(LaunchKernel(
            function, dim3(gridX, gridY, gridZ), dim3(blockX, blockY, blockZ), kernelParams,
            sharedMemBytes, reinterpret_cast<cudaStream_t>(stream), RankClient::Gap::Inside));
    }

    // Triton's launcher: the launch attributes (clusters, cooperative launch, programmatic
    // stream serialisation) do not change the op the bridge times.
    CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction function,
                              void** kernelParams, void** extra)
    {
        if (!config)
        {
            return CUDA_ERROR_INVALID_VALUE;
        }
        return cuLaunchKernel(function, config->gridDimX, config->gridDimY, config->gridDimZ,
                              config->blockDimX, config->blockDimY, config->blockDimZ,
                              config->sharedMemBytes, config->hStream, kernelParams, extra);
    }

} // extern "C"
