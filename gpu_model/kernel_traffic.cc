#include "kernel_traffic.h"

#include "copy_kernel_bytes.h"
#include "kernel_name_parts.h"
#include "launch_facts.h"

#include <array>
#include <numeric>
#include <string>
#include <vector>

namespace phantora
{

namespace
{

bool Has(std::string_view s, std::string_view part)
{
    return s.find(part) != std::string_view::npos;
}

double Blocks(const profile::OpKey& key)
{
    return static_cast<double>(key.grid[0]) * static_cast<double>(key.grid[1]) *
           static_cast<double>(key.grid[2]);
}

/// The size of the first element type \p text names.
std::optional<uint32_t> FirstElement(std::string_view text)
{
    const auto sizes = ElementTypesIn(text);
    if (sizes.empty())
        return std::nullopt;
    return sizes.front();
}

/// Bytes each element of a TensorIterator loop moves: its \p operands tensors (inputs
/// and the output) of the types \p functor names.  A functor that spells its types
/// (BinaryFunctor<a, b, out, op>, the A/B unary ones with a CPU scalar, FillFunctor<t>, a
/// lambda's parameters) gives each operand's; a cast to bf16 or half writes 2 bytes from
/// the float it reads; any other operand is the functor's first element type.
std::optional<double> BytesPerElement(std::string_view functor, int operands)
{
    if (operands <= 0)
        return std::nullopt;
    auto typeAt = [](const std::vector<std::string_view>& args, std::size_t i)
    { return i < args.size() ? ElementBytes(args[i]) : std::nullopt; };
    if (auto a = TemplateArgs(functor, "BinaryFunctor"); a.size() >= 3 && operands == 3)
    {
        const auto x = typeAt(a, 0), y = typeAt(a, 1), out = typeAt(a, 2);
        if (x && y && out)
            return double(*x + *y + *out);
    }
    for (const std::string_view unary : {"AUnaryFunctor", "BUnaryFunctor"})
    {
        if (auto a = TemplateArgs(functor, unary); a.size() >= 3 && operands == 2)
        {
            const auto in = typeAt(a, unary == "AUnaryFunctor" ? 1 : 0), out = typeAt(a, 2);
            if (in && out)
                return double(*in + *out);
        }
    }
    if ((Has(functor, "bfloat16_copy_kernel") || Has(functor, "float16_copy_kernel")) &&
        operands == 2)
    {
        return 4.0 + 2.0;
    }
    const auto first = FirstElement(functor);
    if (auto params = LambdaParams(functor);
        params && static_cast<int>(params->size()) + 1 == operands && !params->empty())
    {
        double sum = 0;
        for (std::string_view p : *params)
        {
            const auto b = ElementBytes(p);
            if (!b)
                return first ? std::optional<double>(double(*first) * operands) : std::nullopt;
            sum += *b;
        }
        return sum + *ElementBytes(params->front()); // the output as the first input
    }
    if (!first)
        return std::nullopt;
    return double(*first) * operands;
}

/// The operands (inputs and the output) of the functor a legacy elementwise_kernel's
/// lambda applies: gpu_kernel_impl_nocast<F> or gpu_kernel_impl<F>.
std::optional<int> FunctorOperands(std::string_view functor)
{
    if (Has(functor, "BinaryFunctor<") || Has(functor, "CUDAFunctor_add<"))
        return 3;
    if (Has(functor, "UnaryFunctor<"))
        return 2;
    if (Has(functor, "FillFunctor<"))
        return 1;
    if (auto params = LambdaParams(functor))
        return static_cast<int>(params->size()) + 1;
    return std::nullopt;
}

/// The tensors of a TensorIterator loop's data array: "std::array<char*, 3ul>".
std::optional<int> ArrayOperands(std::string_view arg)
{
    const auto a = TemplateArgs(arg, "std::array");
    if (a.size() != 2)
        return std::nullopt;
    const auto n = IntegerArg(a[1]);
    return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
}

std::optional<KernelTraffic> Elementwise(const profile::OpKey& key, std::string_view base,
                                         std::string_view argFacts)
{
    const double threads = Blocks(key) * key.block[0] * key.block[1] * key.block[2];
    std::optional<double> perElement;
    double bound = 0;
    if (base == "vectorized_elementwise_kernel")
    {
        const auto a = TemplateArgs(key.name, base);
        if (a.size() != 3)
            return std::nullopt;
        const auto operands = ArrayOperands(a[2]);
        perElement = operands ? BytesPerElement(a[1], *operands) : std::nullopt;
        // elems_per_thread<io_size>: 16 where the operands are one byte in all, else 8
        bound = threads * (perElement && *perElement == 1.0 ? 16 : 8);
    }
    else if (base == "unrolled_elementwise_kernel")
    {
        const auto a = TemplateArgs(key.name, base);
        if (a.size() < 3)
            return std::nullopt;
        const auto operands = ArrayOperands(a[1]);
        const auto perThread = IntegerArg(a[2]);
        perElement = operands ? BytesPerElement(a[0], *operands) : std::nullopt;
        bound = threads * static_cast<double>(perThread.value_or(4));
    }
    else if (base == "elementwise_kernel")
    {
        const auto a = TemplateArgs(key.name, base);
        if (a.size() != 3)
            return std::nullopt;
        const auto nt = IntegerArg(a[0]), vt = IntegerArg(a[1]);
        auto functor = TemplateArgs(a[2], "gpu_kernel_impl_nocast");
        if (functor.empty())
            functor = TemplateArgs(a[2], "gpu_kernel_impl");
        if (!nt || !vt || functor.size() != 1)
            return std::nullopt;
        const auto operands = FunctorOperands(functor[0]);
        perElement = operands ? BytesPerElement(functor[0], *operands) : std::nullopt;
        bound = Blocks(key) * static_cast<double>(*nt * *vt);
    }
    if (!perElement)
        return std::nullopt;
    // launch_legacy_kernel: the operands are not contiguous (or need casts and are not)
    const Access access = base == "elementwise_kernel"            ? Access::Strided
                          : base == "unrolled_elementwise_kernel" ? Access::Unrolled
                                                                  : Access::Contiguous;
    if (const auto n = ArgFact(argFacts, 0))
        return KernelTraffic{static_cast<double>(*n) * *perElement, true, true, access};
    return KernelTraffic{bound * *perElement, true, true, access}; // within a block's share
}

constexpr double kChunkElements = 65536; // multi_tensor_apply's kChunkSize

std::optional<KernelTraffic> MultiTensor(const profile::OpKey& key, std::string_view workFacts)
{
    const auto a = TemplateArgs(key.name, "multi_tensor_apply_kernel");
    if (a.size() < 2)
        return std::nullopt;
    const std::string_view meta = a[0], functor = a[1];
    // The functor's own template: the first "Name<" in it.
    const std::size_t lt = functor.find('<');
    if (lt == std::string_view::npos)
        return std::nullopt;
    std::string_view name = functor.substr(0, lt);
    name = name.substr(name.rfind(':') == std::string_view::npos ? 0 : name.rfind(':') + 1);
    const auto f = TemplateArgs(functor, name);
    if (f.empty())
        return std::nullopt;
    double reads = 0, writes = 0, elementBytes = 0;
    if (name == "CopyFunctor" && f.size() >= 2)
    {
        const auto dst = ElementBytes(f[0]), src = ElementBytes(f[1]);
        if (!dst || !src)
            return std::nullopt;
        const double per = double(*dst + *src); // one read, one written
        const auto elements = LaunchFact(workFacts, "elements");
        const double n = elements ? double(*elements) : Blocks(key) * kChunkElements;
        return KernelTraffic{n * per, elements.has_value(), !elements.has_value()};
    }
    const auto t = ElementBytes(f[0]);
    if (!t)
        return std::nullopt;
    elementBytes = *t;
    const auto depth = f.size() >= 2 ? IntegerArg(f[1]) : std::nullopt;
    if (name.substr(0, 5) == "Fused" && depth)
    {
        // param, grad and state lists read; all but the gradients written
        reads = double(*depth), writes = double(*depth) - 1;
    }
    else if (name == "LpNormFunctor")
    {
        reads = 1, writes = 0; // one partial sum a block
    }
    else if (f.size() >= 4 && IntegerArg(f[f.size() - 2]))
    {
        // <T, depth, r_args_depth, res_arg_index>: r_args_depth lists read, one written
        reads = double(*IntegerArg(f[f.size() - 2])), writes = 1;
    }
    else
    {
        // the metadata's depth: its lists, read, and one written
        const auto m = TemplateArgs(meta, meta.substr(0, meta.find('<')));
        const auto lists = m.empty() ? std::nullopt : IntegerArg(m.back());
        if (!lists)
            return std::nullopt;
        reads = double(*lists), writes = 1;
    }
    const auto elements = LaunchFact(workFacts, "elements");
    const double n = elements ? double(*elements) : Blocks(key) * kChunkElements;
    return KernelTraffic{n * (reads + writes) * elementBytes, elements.has_value(),
                         !elements.has_value()};
}

/// A kernel over rows: its tensors of rows x length elements.
struct RowKernel
{
    std::string_view base;
    int rowsArg;   ///< the argument holding the rows; -1: the grid's x
    int lengthArg; ///< the argument holding a row's elements
    int tensors;   ///< tensors of rows x length elements read or written
};

constexpr std::array<RowKernel, 17> kRowKernels = {{
    {"cunn_SoftMaxForward", -1, 2, 2},
    {"cunn_SoftMaxForwardSmem", -1, 2, 2},
    {"cunn_SoftMaxBackward", -1, 3, 3},
    {"cunn_SoftMaxBackwardSmem", -1, 3, 3},
    {"softmax_warp_forward", 2, 4, 2},
    {"softmax_warp_backward", 3, 5, 3},
    {"vectorized_layer_norm_kernel", -1, 0, 2},
    {"LayerNormForwardCUDAKernel", -1, 0, 2},
    {"RowwiseMomentsCUDAKernel", -1, 0, 1},
    {"layer_norm_grad_input_kernel_vectorized", -1, 6, 3},
    {"layer_norm_grad_input_kernel", -1, 6, 3},
    {"GammaBetaBackwardCUDAKernelTemplate", 0, 1, 2},
    {"GammaBetaBackwardSimpleCUDAKernel", 0, 1, 2},
    {"batch_norm_collect_statistics_channels_last_kernel", 5, 6, 1},
    {"batch_norm_transform_input_channels_last_kernel", 7, 8, 2},
    {"batch_norm_backward_reduce_channels_last_kernel", 10, 11, 2},
    {"batch_norm_backward_elemt_channels_last_kernel", 9, 10, 3},
}};

std::optional<KernelTraffic> Rows(const profile::OpKey& key, std::string_view base,
                                  std::string_view argFacts)
{
    for (const RowKernel& r : kRowKernels)
    {
        if (r.base != base)
            continue;
        const auto length = ArgFact(argFacts, r.lengthArg);
        const auto rows =
            r.rowsArg < 0 ? std::optional<uint64_t>(key.grid[0]) : ArgFact(argFacts, r.rowsArg);
        std::optional<uint32_t> element;
        for (std::string_view arg : TemplateArgs(key.name, base))
        {
            if ((element = ElementBytes(arg)))
                break;
        }
        if (!length || !rows || !element)
            return std::nullopt;
        return KernelTraffic{double(*rows) * double(*length) * r.tensors * *element, true, false};
    }
    return std::nullopt;
}

/// Inductor's Triton kernels (triton_poi_ pointwise, triton_per_ and triton_red_
/// reductions): the interposer counts their buffers and multiplies their sizes (kernel_work.h).
/// Each buffer is taken to move every element once at 4 bytes: the types are in the
/// kernel's Triton source, not in its cubin, so fp32 is the bound (bf16 buffers move half),
/// and a reduction's outputs, smaller than its inputs, are counted at the inputs' size.
std::optional<KernelTraffic> InductorTriton(std::string_view base, std::string_view workFacts)
{
    if (base.rfind("triton_poi_", 0) != 0 && base.rfind("triton_per_", 0) != 0 &&
        base.rfind("triton_red_", 0) != 0)
        return std::nullopt;
    const auto elements = LaunchFact(workFacts, "elements");
    const auto pointers = LaunchFact(workFacts, "pointers");
    if (!elements || !pointers)
        return std::nullopt;
    constexpr double kElementBytes = 4;
    return KernelTraffic{double(*elements) * double(*pointers) * kElementBytes, false,
                         base.rfind("triton_poi_", 0) == 0};
}

} // namespace

std::optional<KernelTraffic> TrafficOf(const profile::OpKey& key, std::string_view argFacts,
                                       std::string_view workFacts)
{
    if (key.kind != profile::OpKind::Kernel)
        return std::nullopt;
    const std::string_view base = KernelBaseName(key.name);
    if (base == "multi_tensor_apply_kernel")
        return MultiTensor(key, workFacts);
    if (auto triton = InductorTriton(base, workFacts))
        return triton;
    if (auto copy = CopyKernelBytes(key.name, key.grid, argFacts))
        return KernelTraffic{static_cast<double>(*copy), true, true}; // a block per chunk
    if (auto rows = Rows(key, base, argFacts))
        return rows;
    return Elementwise(key, base, argFacts);
}

} // namespace phantora
