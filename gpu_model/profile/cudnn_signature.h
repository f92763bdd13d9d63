// A cuDNN op's name as the interposer and the recorder write it, read back.  One execute
// (a finalised graph run through cudnnBackendExecute, or a legacy compute call) is one
// op on its stream, named by what decides its cost, never by pointers or handles:
//   cudnnSdpaFprop(b=8,h=8,h_kv=8,s_q=512,s_kv=512,d_qk=64,d_v=64,type=bf16,layout=bshd,
//                  causal=1,bias=0,padding=0,dropout=0,scale=1,stats=1)
//   cudnnSdpaBprop(... the same fields but stats ...)
//   cudnnConvFprop(x=8x64x56x56,w=64x64x3x3,y=8x64x56x56,pad=1x1,stride=1x1,dilation=1x1,
//                  type=bf16,compute=f32,layout=nhwc,epilogue=none)   (also Dgrad, Wgrad)
//   cudnnBatchNormFwdTraining(x=8x64x56x56,type=bf16,layout=nhwc,mode=spatial_persistent)
//   (also cudnnBatchNormFwdInference, cudnnBatchNormBwd)
// Dims are logical (N, C, spatial...; attention b, h, s, d); layout says how they lie in
// memory.  The estimator needs the work; the replay tool everything to run it again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phantora::profile
{

enum class CudnnOpClass : uint8_t
{
    Attention,     ///< cudnnSdpaFprop, cudnnSdpaBprop
    Convolution,   ///< cudnnConvFprop, cudnnConvDgrad, cudnnConvWgrad
    Normalization, ///< cudnnBatchNorm*: memory-bound
};

struct CudnnSignature
{
    std::string api;
    std::vector<std::pair<std::string, std::string>> fields; ///< in the order written

    /// The class of \p api; nullopt for a name that is no cuDNN op of ours.
    static std::optional<CudnnOpClass> ClassOf(std::string_view api);
    CudnnOpClass Class() const { return *ClassOf(api); }

    /// A field's text, or nullptr.
    const std::string* Field(std::string_view key) const;
    /// A non-negative integer field; nullopt if absent or not one.
    std::optional<int64_t> Int(std::string_view key) const;
    /// A dims field ("8x64x56x56"); empty if absent or malformed.
    std::vector<int64_t> Dims(std::string_view key) const;

    /// Arithmetic work: attention 2*b*h*s_q*s_kv*(d_qk+d_v) (4bhs^2d when d_qk = d_v),
    /// halved when causal, 2.5x for the backward pass (five matmuls to the forward's
    /// two); convolution 2*N*K*P*Q*(C/groups)*R*S whatever the direction; 0 for
    /// normalisation.
    double Flops() const;
    /// The least bytes the op must move through HBM: each operand once (attention and
    /// convolution); batch norm reads its input twice (statistics, then normalising) and
    /// writes once forward, and reads input and gradient twice and writes once backward.
    double Bytes() const;
    /// The fields that are not the shape: ops of one family scale into each other.
    std::string Family() const;
    /// The numbers of the shape, for "the nearest measured shape" (empty if malformed).
    std::vector<double> Shape() const;
    /// The operand data type's short name (cuda_abi/cuda_type_names.h names).
    std::string Type() const;

    /// The name as written (round trip of Parse).
    std::string Name() const;
    /// nullopt unless \p name is api(key=value,...) with a known api and the fields its
    /// class needs.
    static std::optional<CudnnSignature> Parse(std::string_view name);
};

/// "8x64x56x56" for {8, 64, 56, 56}.
std::string JoinDims(const std::vector<int64_t>& dims);

} // namespace phantora::profile
