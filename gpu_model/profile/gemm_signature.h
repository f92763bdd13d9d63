// A GEMM op's name as the interposer writes it, read back:
//   cublasGemmEx(m=4096,n=4096,k=4096,op=NT,a=bf16,b=bf16,c=bf16,batch=1)
//   cublasLtMatmul(m=..,n=..,k=..,op=TN,a=..,b=..,c=..,batch=..,epilogue=1)
// The estimator needs its work; the replay tool needs everything to run it again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace phantora::profile
{

struct GemmSignature
{
    std::string api; ///< cublasGemmEx, cublasGemmStridedBatchedEx, cublasSgemm, cublasLtMatmul...
    int64_t m{0}, n{0}, k{0};
    char opA{'N'}, opB{'N'};
    std::string a, b, c; ///< data type short names (cuda_abi/cuda_type_names.h)
    int64_t batch{1};
    int64_t epilogue{-1}; ///< cublasLtMatmul only

    double Flops() const;
    /// Bytes of A, B and C each touched once: the least the GEMM must move.
    double Bytes() const;
    /// Everything but the shape: GEMMs of one family scale into each other.
    std::string Family() const;
    /// The name the interposer would give it (round trip of Parse).
    std::string Name() const;

    static std::optional<GemmSignature> Parse(std::string_view name);
};

/// Bytes per element of a type short name; 0 if unknown.
double DataTypeBytes(std::string_view type);

} // namespace phantora::profile
