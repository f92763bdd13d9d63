// Bytes that PyTorch's data-movement kernels read and write, from their launch: the
// kernels FSDP2 runs around its all-gathers and reduce-scatters (a one-GPU recording never
// launches some of them, or not at the N-rank shapes), whose cost is their bytes at the
// GPU's copy bandwidth.  Formulas from ATen's TensorShape.cu (torch 2.11):
//   split_with_sizes_copy_out_contiguous_no_cast_kernel(..., int64 src_stride,
//       int64 num_chunks): copies num_chunks rows of src_stride bytes, so it reads and
//       writes src_stride * num_chunks bytes;
//   chunk_cat_cuda_kernel<dst_t, src_t>(..., int64 slice_size, int64 chunk_size, ...):
//       writes chunk_size bytes for each of the grid's chunks (y) and slices (z), reading
//       those bytes at the source's element size.
// The scalars come from the launch's argument facts (kernel_params.h ArgFacts:
// "ordinal=value,..."), which keep 8-byte values below 2^32.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace phantora
{

/// Bytes read plus written by the launch, if the kernel is one of the above and its
/// facts hold the sizes.
std::optional<uint64_t> CopyKernelBytes(std::string_view name, const std::array<uint32_t, 3>& grid,
                                        std::string_view argFacts);

/// The kernel's name without return type, namespaces, template and function arguments:
/// "multi_tensor_apply_kernel" for "void at::native::(anonymous namespace)::
/// multi_tensor_apply_kernel<...>(...)".  Kernels of one template share it.
std::string_view KernelBaseName(std::string_view name);

} // namespace phantora
