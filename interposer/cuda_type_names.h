// Short names of CUDA data types, as they appear in GEMM op signatures.
#pragma once

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

} // namespace phantora::interposer
