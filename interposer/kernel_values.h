// The few kernels whose outputs the value shadow computes (value_shadow.h), because
// programs steer by them.  Kernels compute nothing here otherwise.
//
// PyTorch's recv_object_list (pipeline parallelism exchanges stage shapes with it) sizes
// the buffer for the pickled objects by torch.sum(sizes).item(): the sizes arrive by
// ncclRecv and are summed by an int64 reduce kernel.  With that sum unknown, the rank read
// 0 and received 0 bytes where the sender sent the pickle; it then slices the bytes at
// `offset + size`, an int64 add.  So an int64 sum into one output, and int64 additions
// (tensor + scalar, tensor + tensor) on contiguous tensors, over small inputs whose bytes
// the shadow knows write their real results; other launches of them forget the output.
#pragma once

#include "cuda_abi/kernel_params.h"

#include <string>

namespace phantora::interposer
{

/// Called for each launch of kernel \p name with the parameter \p layout (may be null)
/// and \p args: writes the outputs of the kernels described above into the value shadow
/// when their inputs are known, else forgets them.  True when it knew the kernel and its
/// layout, so its output is handled exactly; false: the caller forgets what the kernel
/// may write (kernel_signature.h), which for these kernels would read pointers out of
/// structs whose padding holds stale stack words, and could drop a pending input.
bool ComputeKnownOutputs(const std::string& name, const kernel_args::ParamLayout* layout,
                         void* const* args);

} // namespace phantora::interposer
