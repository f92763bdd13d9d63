// cuBLASLt matmuls: descriptors are tracked as the program sets them, and each
// cublasLtMatmul becomes one op on its stream, named by its exact signature (shape
// from the D and A layouts and the transposes, types, batch, epilogue).  The
// heuristic offers one algorithm with no workspace, which every caller accepts.
#include "cuda_abi/cuda_type_names.h"
#include "cuda_state.h"
#include "handle_table.h"
#include "hook_scope.h"
#include "opaque_table.h"
#include "value_shadow.h"

#include <cstring>
#include <cublasLt.h>
#include <fmt/format.h>
#include <memory>

using namespace phantora;
using namespace phantora::interposer;

struct cublasLtContext
{
};

namespace
{

struct MatmulDesc
{
    cublasOperation_t transa{CUBLAS_OP_N};
    cublasOperation_t transb{CUBLAS_OP_N};
    uint32_t epilogue{CUBLASLT_EPILOGUE_DEFAULT};
};

struct Layout
{
    cudaDataType type{CUDA_R_32F};
    uint64_t rows{0};
    uint64_t cols{0};
    int32_t batch{1};
};

constinit OpaqueTable<cublasLtMatmulDescOpaque_t, MatmulDesc> g_descs;
constinit OpaqueTable<cublasLtMatrixLayoutOpaque_t, Layout> g_layouts;
constinit OpaqueTable<cublasLtMatmulPreferenceOpaque_t, int> g_prefs;
constinit HandleTable<cublasLtHandle_t, cublasLtContext> g_handles;

template <class T> bool Read(const void* buf, size_t size, T& out)
{
    if (!buf || size != sizeof(T))
    {
        return false;
    }
    std::memcpy(&out, buf, sizeof(T));
    return true;
}

} // namespace

extern "C"
{

    cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle)
    {
        HookScope scope;
        if (!handle)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        *handle = g_handles.Adopt(std::make_unique<cublasLtContext>());
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
    {
        return g_handles.Erase(handle) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
    }

    size_t cublasLtGetVersion()
    {
        return CUBLAS_VERSION;
    }

    cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t,
                                            cudaDataType_t)
    {
        if (!desc)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        *desc = g_descs.Create({});
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
    {
        return g_descs.Destroy(desc) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    }

    cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                  cublasLtMatmulDescAttributes_t attr,
                                                  const void* buf, size_t size)
    {
        MatmulDesc* d = g_descs.Find(desc);
        if (!d || !buf)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        int32_t op = 0;
        switch (attr)
        {
        case CUBLASLT_MATMUL_DESC_TRANSA:
            return Read(buf, size, op)
                       ? (d->transa = static_cast<cublasOperation_t>(op), CUBLAS_STATUS_SUCCESS)
                       : CUBLAS_STATUS_INVALID_VALUE;
        case CUBLASLT_MATMUL_DESC_TRANSB:
            return Read(buf, size, op)
                       ? (d->transb = static_cast<cublasOperation_t>(op), CUBLAS_STATUS_SUCCESS)
                       : CUBLAS_STATUS_INVALID_VALUE;
        case CUBLASLT_MATMUL_DESC_EPILOGUE:
            return Read(buf, size, d->epilogue) ? CUBLAS_STATUS_SUCCESS
                                                : CUBLAS_STATUS_INVALID_VALUE;
        default:
            // bias and scale pointers, fast-accumulation flags...: no effect on the timeline yet
            return CUBLAS_STATUS_SUCCESS;
        }
    }

    cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                              uint64_t rows, uint64_t cols, int64_t)
    {
        if (!layout)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        *layout = g_layouts.Create({type, rows, cols, 1});
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
    {
        return g_layouts.Destroy(layout) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    }

    cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                    cublasLtMatrixLayoutAttribute_t attr,
                                                    const void* buf, size_t size)
    {
        Layout* l = g_layouts.Find(layout);
        if (!l || !buf)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)
        {
            return Read(buf, size, l->batch) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
        }
        return CUBLAS_STATUS_SUCCESS; // order, strides: no effect on the timeline yet
    }

    cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref)
    {
        if (!pref)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        *pref = g_prefs.Create(0);
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
    {
        return g_prefs.Destroy(pref) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    }

    cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                        cublasLtMatmulPreferenceAttributes_t,
                                                        const void* buf, size_t)
    {
        return g_prefs.Find(pref) && buf ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    }

    cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc,
                                                  cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                  cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                  cublasLtMatmulPreference_t, int requested,
                                                  cublasLtMatmulHeuristicResult_t results[],
                                                  int* returned)
    {
        if (!g_descs.Find(desc) || requested <= 0 || !results || !returned)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        std::memset(&results[0], 0, sizeof results[0]);
        results[0].state = CUBLAS_STATUS_SUCCESS;
        results[0].wavesCount = 1.0f;
        *returned = 1;
        return CUBLAS_STATUS_SUCCESS;
    }

    cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void*,
                                  const void*, cublasLtMatrixLayout_t Adesc, const void*,
                                  cublasLtMatrixLayout_t Bdesc, const void*, const void*,
                                  cublasLtMatrixLayout_t Cdesc, void* D,
                                  cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t*, void*,
                                  size_t, cudaStream_t stream)
    {
        HookScope scope;
        const MatmulDesc* d = g_descs.Find(desc);
        const Layout* a = g_layouts.Find(Adesc);
        const Layout* b = g_layouts.Find(Bdesc);
        const Layout* c = g_layouts.Find(Cdesc);
        const Layout* out = g_layouts.Find(Ddesc);
        if (!d || !a || !b || !c || !out)
        {
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        // D is m x n; op(A) is m x k.
        const uint64_t k = d->transa == CUBLAS_OP_N ? a->cols : a->rows;
        wire::KernelLaunch op;
        op.stream = StreamId(stream);
        op.name = fmt::format(
            "cublasLtMatmul(m={},n={},k={},op={}{},a={},b={},c={},batch={},epilogue={})", out->rows,
            out->cols, k, GemmOperationName(d->transa, a->type),
            GemmOperationName(d->transb, b->type), DataTypeName(a->type), DataTypeName(b->type),
            DataTypeName(out->type), out->batch, d->epilogue);
        const uint64_t written = reinterpret_cast<uintptr_t>(D); // value_shadow.h
        ValueShadow::Get().MayWrite(&written, 1);
        scope.Client().Post(std::move(op));
        return CUBLAS_STATUS_SUCCESS;
    }

} // extern "C"
