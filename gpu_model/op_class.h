// What kind of work an op is, for the estimators' accuracy figures and the error band of
// an estimate: each class is estimated by its own mechanism (op_estimator.h), and how
// well that mechanism does is measured per class (estimator_accuracy.h).
#pragma once

#include "gpu_model/profile/op_key.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace phantora
{

enum class OpClass : uint8_t
{
    Elementwise, ///< PyTorch's TensorIterator kernels: one pass over their operands
    Reduction,   ///< reduce_kernel and other kernels that fold a tensor into fewer values
    Norm,        ///< layer, batch, RMS and group norms and softmax: rows read, normalised
    Optimizer,   ///< multi_tensor_apply (foreach and fused optimizers) and other optimizers
    CopyKernel,  ///< cat, split, chunk, gather, scatter and index kernels: data movement
    OtherKernel, ///< attention, sort, embedding backward, pooling, the program's own
    Gemm,
    Cudnn,
    MemcpyHtoD,
    MemcpyDtoH,
    MemcpyDtoD,
    MemcpyOther, ///< host to host, peer to peer
    Memset,
};
inline constexpr std::size_t kOpClasses = 13;

const char* OpClassName(OpClass c);
std::optional<OpClass> ParseOpClass(std::string_view name);

OpClass ClassOf(const profile::OpKey& key);

} // namespace phantora
