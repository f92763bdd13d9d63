// The bytes a memory-bound kernel reads and writes, from its launch: PyTorch's
// TensorIterator loops, foreach and fused optimizers (multi_tensor_apply), row-wise norms
// and softmax, and the data-movement kernels of copy_kernel_bytes.h.  Such a kernel takes
// the time its bytes take at the GPU's memory bandwidth (op_estimator.h, Bytes); these are
// the kernels whose launch says how many bytes that is:
//   TensorIterator loops (ATen's CUDALoops.cuh) take N, the elements, as their first
//     argument; each element reads the inputs and writes the output, whose types the
//     functor names.  Where N is not among the facts (kernel_params.h keeps 4-byte values
//     below 2^23) the grid says it within one block: vectorized_elementwise_kernel does
//     128 threads x 8 elements a block (16 for one-byte operands), unrolled_elementwise_
//     kernel<..., ept, ...> 128 x ept, elementwise_kernel<nt, vt, ...> nt x vt;
//   multi_tensor_apply_kernel<Metadata<depth>, Functor<T, depth, r_args_depth,
//     res_arg_index>> processes a chunk of at most 65536 elements a block, reading
//     r_args_depth lists and writing one (fused optimizers: reading all depth lists and
//     writing all but the gradients); the elements are the launch's "elements" work fact
//     (the interposer reads them from the TensorListMetadata it passes, kernel_work.h),
//     else full chunks, a bound;
//   norm and softmax kernels read and write rows x row length elements of each of their
//     tensors; the rows and the length are a scalar argument or the grid;
//   Inductor's Triton kernels (triton_poi_, triton_per_, triton_red_) move each of their
//     buffers' elements once (the "elements" and "pointers" work facts), at 4 bytes.
#pragma once

#include "gpu_model/profile/op_key.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace phantora
{

/// How the kernel walks memory, which sets the bandwidth it reaches.
enum class Access : uint8_t
{
    Contiguous, ///< consecutive threads, consecutive addresses: the copy bandwidth
    /// TensorIterator's unrolled loop (unrolled_elementwise_kernel): contiguous, but one
    /// element a load, most often cast from and to types given at run time
    Unrolled,
    /// TensorIterator's loop over non-contiguous operands (elementwise_kernel): an offset
    /// computed per element, accesses a transpose or broadcast apart
    Strided,
};

struct KernelTraffic
{
    double bytes{0}; ///< read plus written
    /// From the launch's arguments, or its grid where that says them within a block's
    /// share; false: an upper bound, every block doing a full share where a block's share
    /// varies (multi_tensor_apply's chunks).
    bool exact{true};
    /// The bytes go with the launch's blocks (TensorIterator loops: N is the grid's
    /// blocks x each block's elements; foreach launches' full chunks): its time scales
    /// with its threads.  False: rows of a length no launch dimension says (norms,
    /// softmax), or copies of sizes the arguments give.
    bool followsGrid{false};
    Access access{Access::Contiguous};
};

/// \p argFacts: the launch's argument facts (kernel_params.h ArgFacts); \p workFacts:
/// what the interposer read from its struct arguments (kernel_work.h), "" if nothing.
std::optional<KernelTraffic> TrafficOf(const profile::OpKey& key, std::string_view argFacts,
                                       std::string_view workFacts = {});

} // namespace phantora
