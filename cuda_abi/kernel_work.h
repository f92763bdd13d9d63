// What a launch's struct arguments say about the work it does, for estimating kernels the
// profile never measured (gpu_model/kernel_traffic.h): not part of the op's key, so a
// recording and a simulation match as before, and only the simulator (the interposer)
// reads them.
//
// multi_tensor_apply_kernel (ATen's MultiTensorApply.cuh: foreach ops and the fused
// optimizers) is passed, by value, a TensorListMetadata: the lists' addresses, each
// tensor's numel, and which tensor and which chunk of kChunkSize (65536) elements each
// block of the launch does.  The elements the launch processes are the sum over its
// blocks of min(65536, numel - chunk x 65536): a launch of small tensors (biases, norm
// weights) does far less than its blocks' full chunks.  The struct's layout follows from
// its kind and depth (the mangled name's template arguments) and ATen's constants, which
// come in two sets (4 KiB and 32 KiB kernel arguments); the one whose size is the
// parameter's, as the fat binary gives it, is read.  Nothing is read where none fits.
#pragma once

#include "cuda_abi/kernel_params.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace phantora::kernel_args
{

/// The elements a multi_tensor_apply_kernel launch of \p blocks blocks processes, from
/// its first parameter's bytes \p metadata; nullopt for another kernel or a layout that
/// does not fit.  \p mangled: the kernel's device name.
std::optional<uint64_t> MultiTensorElements(std::string_view mangled, std::string_view metadata,
                                            uint32_t blocks);

/// "elements=N" for a multi_tensor_apply_kernel launch (MultiTensorElements);
/// "elements=N,pointers=P" for a Triton kernel Inductor generated (triton_poi_, triton_per_,
/// triton_red_: its buffers first, then its sizes xnumel, r0_numel, ... as 4-byte
/// integers, then Triton's own scratch pointers): N the product of the sizes, P the
/// buffers; "" for anything else.
std::string WorkFacts(std::string_view mangled, const ParamLayout& layout, void* const* args,
                      uint32_t blocks);

} // namespace phantora::kernel_args
