#include "kernel_values.h"

#include "device_memory.h"
#include "value_shadow.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace phantora::interposer
{

namespace
{

/// PyTorch's reduction of int64 by sum (torch.sum of a LongTensor), one name per PyTorch
/// build: at::native::reduce_kernel<..., ReduceOp<long, func_wrapper_t<long, sum_functor<
/// long, long, long>::operator()...>, ...>>(ReduceOp<...>).
bool IsInt64Sum(const std::string& name)
{
    return name.rfind("void at::native::reduce_kernel<", 0) == 0 &&
           name.find("ReduceOp<long, at::native::func_wrapper_t<long, at::native::sum_functor<"
                     "long, long, long>") != std::string::npos;
}

// ReduceOp's leading members (aten/src/ATen/native/cuda/Reduce.cuh): ops (an empty
// functor wrapper), ident (int64), then ReduceConfig, whose first ints are
// element_size_bytes, num_inputs (the elements reduced into each output) and num_outputs.
constexpr std::size_t kElementSizeAt = 16;
constexpr std::size_t kNumInputsAt = 20;
constexpr std::size_t kNumOutputsAt = 24;
// Its last members, counted from its end: src, dst[2], acc_buf, cta_buf, semaphores,
// base_idx, accumulate, final_output, noutputs.  Between the two ends lie its offset
// calculators, whose unused entries hold whatever the host's stack held (device
// addresses among it), so the pointers are read at their places, not searched for.
constexpr std::size_t kSrcFromEnd = 64;
constexpr std::size_t kDstFromEnd = 56;
constexpr std::size_t kNoutputsFromEnd = 4;

int32_t IntAt(const char* p, std::size_t at)
{
    int32_t v = 0;
    std::memcpy(&v, p + at, sizeof v);
    return v;
}

int64_t Int64At(const char* p, std::size_t at)
{
    int64_t v = 0;
    std::memcpy(&v, p + at, sizeof v);
    return v;
}

bool Int64Sum(const kernel_args::ParamLayout& layout, void* const* args)
{
    const std::size_t size = layout.empty() ? 0 : layout[0].size;
    if (size < kSrcFromEnd + kNumOutputsAt || !args[0])
    {
        return false;
    }
    const auto* op = static_cast<const char*>(args[0]);
    const auto src = static_cast<uint64_t>(Int64At(op, size - kSrcFromEnd));
    const auto dst = static_cast<uint64_t>(Int64At(op, size - kDstFromEnd));
    const DeviceMemory& memory = DeviceMemory::Get();
    if (!memory.Contains(reinterpret_cast<const void*>(src)) ||
        !memory.Contains(reinterpret_cast<const void*>(dst)) ||
        IntAt(op, size - kNoutputsFromEnd) != 1)
    {
        return false; // not the layout this was written for: leave the shadow alone
    }
    ValueShadow& shadow = ValueShadow::Get();
    const int32_t n = IntAt(op, kNumInputsAt);
    if (IntAt(op, kElementSizeAt) != 8 || IntAt(op, kNumOutputsAt) != 1 || n <= 0 ||
        static_cast<std::size_t>(n) * 8 > ValueShadow::kMaxBytes)
    {
        shadow.Forget(dst, 8);
        return true;
    }
    const std::optional<std::string> in =
        shadow.Known(src, static_cast<std::size_t>(n) * 8, BridgeFetch());
    if (!in)
    {
        shadow.Forget(dst, 8);
        return true;
    }
    int64_t sum = 0;
    for (int32_t i = 0; i < n; ++i)
    {
        int64_t v = 0;
        std::memcpy(&v, in->data() + static_cast<std::size_t>(i) * 8, sizeof v);
        sum += v;
    }
    shadow.Write(dst, &sum, sizeof sum);
    return true;
}

/// PyTorch's int64 additions on contiguous tensors (the vectorized and unrolled launchers;
/// the strided one is left out): `tensor + scalar` (CUDAFunctorOnSelf_add: self + other *
/// alpha, both scalars in the functor) and `tensor + tensor` (CUDAFunctor_add: self +
/// alpha * other).  recv_object_list slices the received bytes at `offset + size`.
enum class Int64Add
{
    None,
    WithScalar,
    WithTensor,
};

Int64Add Int64AddOf(const std::string& name)
{
    if (name.rfind("void at::native::vectorized_elementwise_kernel<", 0) != 0 &&
        (name.rfind("void at::native::unrolled_elementwise_kernel<", 0) != 0 ||
         name.find("TrivialOffsetCalculator") == std::string::npos))
    {
        return Int64Add::None;
    }
    if (name.find("at::native::CUDAFunctorOnSelf_add<long>, std::array<char*, 2ul>") !=
        std::string::npos)
    {
        return Int64Add::WithScalar;
    }
    if (name.find("at::native::CUDAFunctor_add<long>, std::array<char*, 3ul>") != std::string::npos)
    {
        return Int64Add::WithTensor;
    }
    return Int64Add::None;
}

/// (int N, functor, std::array<char*, K> data, ...): data[0] is the output.
bool Add(Int64Add kind, const kernel_args::ParamLayout& layout, void* const* args)
{
    const std::size_t pointers = kind == Int64Add::WithScalar ? 2 : 3;
    const std::size_t functorBytes = kind == Int64Add::WithScalar ? 16 : 8;
    if (layout.size() < 3 || layout[0].size != 4 || layout[1].size != functorBytes ||
        layout[2].size != pointers * 8 || !args[0] || !args[1] || !args[2])
    {
        return false;
    }
    const int32_t n = IntAt(static_cast<const char*>(args[0]), 0);
    const auto* functor = static_cast<const char*>(args[1]);
    const auto* data = static_cast<const char*>(args[2]);
    const auto out = static_cast<uint64_t>(Int64At(data, 0));
    ValueShadow& shadow = ValueShadow::Get();
    if (n <= 0 || static_cast<std::size_t>(n) * 8 > ValueShadow::kMaxBytes)
    {
        shadow.Forget(out, n > 0 ? static_cast<std::size_t>(n) * 8 : 0);
        return true;
    }
    const std::size_t bytes = static_cast<std::size_t>(n) * 8;
    std::vector<std::optional<std::string>> in;
    for (std::size_t i = 1; i < pointers; ++i)
    {
        in.push_back(
            shadow.Known(static_cast<uint64_t>(Int64At(data, i * 8)), bytes, BridgeFetch()));
        if (!in.back())
        {
            shadow.Forget(out, bytes);
            return true;
        }
    }
    std::string result(bytes, '\0');
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
    {
        const int64_t self = Int64At(in[0]->data(), i * 8);
        // The product is the same whichever of the functor's two scalars is alpha.
        const int64_t v = kind == Int64Add::WithScalar
                              ? self + Int64At(functor, 0) * Int64At(functor, 8)
                              : self + Int64At(functor, 0) * Int64At(in[1]->data(), i * 8);
        std::memcpy(result.data() + i * 8, &v, sizeof v);
    }
    shadow.Write(out, result.data(), bytes);
    return true;
}

} // namespace

bool ComputeKnownOutputs(const std::string& name, const kernel_args::ParamLayout* layout,
                         void* const* args)
{
    if (!layout || !args)
    {
        return false;
    }
    if (IsInt64Sum(name))
    {
        return Int64Sum(*layout, args);
    }
    if (const Int64Add add = Int64AddOf(name); add != Int64Add::None)
    {
        return Add(add, *layout, args);
    }
    return false;
}

} // namespace phantora::interposer
