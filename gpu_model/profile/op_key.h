// The identity of one GPU operation in the profile cache: the same facts the
// interposer sends for it, so a simulated launch and a recorded one meet on one key.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace phantora::profile
{

enum class OpKind : uint8_t
{
    Kernel, ///< a __global__ function: demangled name + launch shape
    Gemm,   ///< a cuBLAS/cuBLASLt call, named by its exact signature (interposer's naming)
    Memcpy, ///< name is the direction: "HtoD", "DtoH", "DtoD", "HtoH"
    Memset,
    Cudnn, ///< a cuDNN execute or compute call, named by its signature (cudnn_signature.h)
};
inline constexpr int kOpKinds = 5;

/// A cuBLAS or cuDNN call: one op of the simulated stream, recorded as the span of the
/// kernels (and memsets) it launched (OpStats::OnStreamNs).
inline bool IsLibraryCall(OpKind kind)
{
    return kind == OpKind::Gemm || kind == OpKind::Cudnn;
}

const char* OpKindName(OpKind kind);
std::optional<OpKind> ParseOpKind(std::string_view text);

struct OpKey
{
    OpKind kind{OpKind::Kernel};
    std::string name;
    std::array<uint32_t, 3> grid{};
    std::array<uint32_t, 3> block{};
    uint32_t sharedMem{0}; ///< dynamic shared memory of the launch, as <<<>>> passes it
    uint64_t bytes{0};     ///< memcpy/memset size

    auto operator<=>(const OpKey&) const = default;

    /// Threads launched: what "the same kernel at another launch shape" scales by.
    double Threads() const;
    /// One line naming the op, for logs, reports and the missing-ops file.
    std::string Describe() const;
};

/// A kernel launch as the interposer names it: GEMMs arrive as "cublas...(m=...)" ops,
/// cuDNN calls as "cudnn...(...)" ops.
OpKey KeyForLaunch(std::string_view name, const std::array<uint32_t, 3>& grid,
                   const std::array<uint32_t, 3>& block, uint32_t sharedMem);

/// A copy of \p bytes as the profile keys it: \p direction "HtoH", "HtoD", "DtoH" or
/// "DtoD" (a memcpy), or "memset".
OpKey KeyForCopy(std::string_view direction, uint64_t bytes);

} // namespace phantora::profile
