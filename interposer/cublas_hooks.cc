// cuBLAS: handles and the GEMM entry points frameworks use.  A GEMM becomes one op
// on the handle's stream, named by its exact signature (shape, transposes, types,
// batch) so its duration can be looked up per shape; bare "cublasGemmEx" etc. in a
// scenario's [kernels.durations] covers every shape.  Everything else in cuBLAS
// fails loudly (generated stubs).
#include "cuda_abi/cuda_type_names.h"
#include "cuda_state.h"
#include "handle_table.h"
#include "hook_scope.h"
#include "value_shadow.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <memory>

using namespace phantora;
using namespace phantora::interposer;

struct cublasContext
{
    cudaStream_t stream{nullptr};
    cublasMath_t mathMode{CUBLAS_DEFAULT_MATH};
    cublasPointerMode_t pointerMode{CUBLAS_POINTER_MODE_HOST};
};

namespace
{

constinit HandleTable<cublasHandle_t, cublasContext> g_handles;

cublasContext* Lookup(cublasHandle_t h)
{
    return g_handles.Find(h);
}

struct Gemm
{
    const char* api;
    cublasOperation_t ta;
    cublasOperation_t tb;
    long long m, n, k;
    cudaDataType a, b, c;
    long long batch;
    void* out; ///< C: its known bytes are forgotten (value_shadow.h)
};

cublasStatus_t Launch(cublasHandle_t handle, const Gemm& g)
{
    HookScope scope;
    cublasContext* ctx = Lookup(handle);
    if (!ctx)
    {
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0)
    {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    wire::KernelLaunch k;
    k.stream = StreamId(ctx->stream);
    k.name = fmt::format("{}(m={},n={},k={},op={}{},a={},b={},c={},batch={})", g.api, g.m, g.n, g.k,
                         GemmOperationName(g.ta, g.a), GemmOperationName(g.tb, g.b),
                         DataTypeName(g.a), DataTypeName(g.b), DataTypeName(g.c), g.batch);
    const uint64_t out = reinterpret_cast<uintptr_t>(g.out);
    ValueShadow::Get().MayWrite(&out, 1);
    scope.Client().Post(std::move(k));
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace

extern "C"
{

    cublasStatus_t cublasCreate_v2(cublasHandle_t* handle)
    {
        HookScope scope;
        if (!handle)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        *handle = g_handles.Adopt(std::make_unique<cublasContext>());
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
    {
        HookScope scope;
        return g_handles.Erase(handle) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
    }

    cublasStatus_t cublasGetVersion_v2(cublasHandle_t, int* version)
    {
        if (!version)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        *version = CUBLAS_VERSION;
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
    {
        cublasContext* ctx = Lookup(handle);
        if (!ctx)
        {
            return CUBLAS_STATUS_NOT_INITIALIZED;
        }
        ctx->stream = stream;
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream)
    {
        cublasContext* ctx = Lookup(handle);
        if (!ctx || !stream)
        {
            return ctx ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_NOT_INITIALIZED;
        }
        *stream = ctx->stream;
        return CUBLAS_STATUS_SUCCESS;
    }

    // The workspace is device memory the program owns; nothing to simulate.
    cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void*, size_t)
    {
        return Lookup(handle) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
    }

    cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
    {
        cublasContext* ctx = Lookup(handle);
        if (!ctx)
        {
            return CUBLAS_STATUS_NOT_INITIALIZED;
        }
        ctx->mathMode = mode;
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode)
    {
        cublasContext* ctx = Lookup(handle);
        if (!ctx || !mode)
        {
            return ctx ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_NOT_INITIALIZED;
        }
        *mode = ctx->mathMode;
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
    {
        cublasContext* ctx = Lookup(handle);
        if (!ctx)
        {
            return CUBLAS_STATUS_NOT_INITIALIZED;
        }
        ctx->pointerMode = mode;
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode)
    {
        cublasContext* ctx = Lookup(handle);
        if (!ctx || !mode)
        {
            return ctx ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_NOT_INITIALIZED;
        }
        *mode = ctx->pointerMode;
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                cublasOperation_t transb, int m, int n, int k, const void*,
                                const void*, cudaDataType Atype, int, const void*,
                                cudaDataType Btype, int, const void*, void* C, cudaDataType Ctype,
                                int, cublasComputeType_t, cublasGemmAlgo_t)
    {
        return Launch(handle, {"cublasGemmEx", transa, transb, m, n, k, Atype, Btype, Ctype, 1, C});
    }

    cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int m, int n, int k,
                                              const void*, const void*, cudaDataType Atype, int,
                                              long long int, const void*, cudaDataType Btype, int,
                                              long long int, const void*, void* C,
                                              cudaDataType Ctype, int, long long int,
                                              int batchCount, cublasComputeType_t, cublasGemmAlgo_t)
    {
        return Launch(handle, {"cublasGemmStridedBatchedEx", transa, transb, m, n, k, Atype, Btype,
                               Ctype, batchCount, C});
    }

    cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k, const float*,
                                  const float*, int, const float*, int, const float*, float* C, int)
    {
        return Launch(handle, {"cublasSgemm", transa, transb, m, n, k, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, 1, C});
    }

    cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const float*, const float*, int, long long int,
                                             const float*, int, long long int, const float*,
                                             float* C, int, long long int, int batchCount)
    {
        return Launch(handle, {"cublasSgemmStridedBatched", transa, transb, m, n, k, CUDA_R_32F,
                               CUDA_R_32F, CUDA_R_32F, batchCount, C});
    }

} // extern "C"
