// cuBLAS GEMMs on a stream, timed with events: one per-shape entry, one per-API
// entry and one without an entry in the scenario.
#include <cstdio>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

int main()
{
    cublasHandle_t h = nullptr;
    cudaStream_t s = nullptr;
    cudaStreamCreate(&s);
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS)
    {
        return 1;
    }
    void* buf = nullptr;
    cudaMalloc(&buf, size_t{1} << 27);
    const float one = 1.0f;
    const float zero = 0.0f;
    cudaEvent_t start, end;
    cudaEventCreate(&start);
    cudaEventCreate(&end);
    cudaEventRecord(start, s);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, 4096, 4096, 4096, &one, buf, CUDA_R_16BF, 4096, buf,
                 CUDA_R_16BF, 4096, &zero, buf, CUDA_R_16BF, 4096, CUBLAS_COMPUTE_32F,
                 CUBLAS_GEMM_DEFAULT);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, 128, &one, static_cast<float*>(buf), 128,
                static_cast<float*>(buf), 128, &zero, static_cast<float*>(buf), 128);
    cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 64, 64, 32, &one, buf, CUDA_R_16F, 64,
                               4096, buf, CUDA_R_16F, 64, 4096, &zero, buf, CUDA_R_16F, 64, 4096,
                               12, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    // cuBLASLt: D (1024 x 512) = op(A) (1024 x 256, A stored transposed) x B, with a bias
    cublasLtHandle_t lt = nullptr;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const int32_t transA = CUBLAS_OP_T;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof transA);
    const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, 256, 1024, 256);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, 256, 512, 256);
    cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, 1024, 512, 1024);
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heuristic, &found);
    if (found != 1 || cublasLtMatmul(lt, desc, &one, buf, la, buf, lb, &zero, buf, lc, buf, lc,
                                     &heuristic.algo, nullptr, 0, s) != CUBLAS_STATUS_SUCCESS)
    {
        return 2;
    }
    cudaEventRecord(end, s);
    cudaEventSynchronize(end);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, end);
    std::printf("gemms took %.3f us\n", ms * 1000.0);
    cublasDestroy(h);
    return 0;
}
