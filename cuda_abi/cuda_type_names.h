// Short names of CUDA data types and cuBLAS operations, as they appear in GEMM op
// signatures (gpu_model/profile/gemm_signature.h reads them back).
#pragma once

#include <cublas_api.h>
#include <library_types.h>

namespace phantora::interposer
{

inline const char* DataTypeName(cudaDataType t)
{
    switch (t)
    {
    case CUDA_R_16BF:
        return "bf16";
    case CUDA_R_16F:
        return "f16";
    case CUDA_R_32F:
        return "f32";
    case CUDA_R_64F:
        return "f64";
    case CUDA_R_8F_E4M3:
        return "e4m3";
    case CUDA_R_8F_E5M2:
        return "e5m2";
    case CUDA_R_8I:
        return "i8";
    case CUDA_R_32I:
        return "i32";
    default:
        return "other";
    }
}

inline bool IsComplex(cudaDataType t)
{
    switch (t)
    {
    case CUDA_C_16F:
    case CUDA_C_16BF:
    case CUDA_C_32F:
    case CUDA_C_64F:
    case CUDA_C_4I:
    case CUDA_C_4U:
    case CUDA_C_8I:
    case CUDA_C_8U:
    case CUDA_C_16I:
    case CUDA_C_16U:
    case CUDA_C_32I:
    case CUDA_C_32U:
    case CUDA_C_64I:
    case CUDA_C_64U:
        return true;
    default:
        return false;
    }
}

/// The letter of operation \p op on a matrix of \p type: N, T, or C for the conjugate
/// transpose.  On real data cuBLAS computes CUBLAS_OP_C as the transpose, and every profile
/// key recorded so far (profiles/*.sqlite hold real types only) names that GEMM "T": so C
/// is "T" for real types, keeping those keys' meaning, and "C" only where conjugation
/// changes the GEMM.
inline const char* GemmOperationName(cublasOperation_t op, cudaDataType type)
{
    switch (op)
    {
    case CUBLAS_OP_N:
        return "N";
    case CUBLAS_OP_T:
        return "T";
    case CUBLAS_OP_C:
        return IsComplex(type) ? "C" : "T";
    default:
        return "?"; // CUBLAS_OP_CONJG, a placeholder cuBLAS does not support
    }
}

} // namespace phantora::interposer
