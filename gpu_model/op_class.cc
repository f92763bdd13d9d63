#include "op_class.h"

#include "copy_kernel_bytes.h"

#include <array>

namespace phantora
{

using profile::OpKind;

namespace
{
constexpr std::array<const char*, kOpClasses> kNames = {
    "elementwise",  "reduction",    "norm",  "optimizer",   "copy_kernel",
    "other_kernel", "gemm",         "cudnn", "memcpy_htod", "memcpy_dtoh",
    "memcpy_dtod",  "memcpy_other", "memset"};

bool Has(std::string_view s, std::string_view part)
{
    return s.find(part) != std::string_view::npos;
}

// By the kernel template's name (KernelBaseName): ATen's names say what the kernel does.
OpClass KernelClass(std::string_view name)
{
    const std::string_view base = KernelBaseName(name);
    if (base == "multi_tensor_apply_kernel" || Has(base, "optimizer") || Has(base, "Adam") ||
        Has(base, "adam") || Has(base, "sgd_"))
    {
        return OpClass::Optimizer;
    }
    // TensorIterator's loops ("elementwise_kernel_with_index" is arange's), but not the
    // indexed scatters and gathers that reuse the word
    if ((Has(base, "elementwise") && !Has(base, "scatter") && !Has(base, "index_elementwise")) ||
        Has(base, "dropout"))
    {
        return OpClass::Elementwise;
    }
    if (Has(base, "lpnorm"))
    {
        return OpClass::Reduction; // the foreach norm's last step
    }
    if (Has(base, "norm") || Has(base, "Norm") || Has(base, "GammaBeta") || Has(base, "oftMax") ||
        Has(base, "softmax"))
    {
        return OpClass::Norm;
    }
    if (Has(base, "reduce") || Has(base, "Reduce") || Has(base, "nll_loss"))
    {
        return OpClass::Reduction;
    }
    if (!Has(base, "TopK") &&
        (Has(base, "Cat") || Has(base, "chunk_cat") || Has(base, "split_with_sizes") ||
         Has(base, "gather") || Has(base, "scatter") || Has(base, "index") || Has(base, "Index") ||
         Has(base, "copy") || Has(base, "Copy")))
    {
        return OpClass::CopyKernel;
    }
    return OpClass::OtherKernel;
}
} // namespace

const char* OpClassName(OpClass c)
{
    return kNames[static_cast<std::size_t>(c)];
}

std::optional<OpClass> ParseOpClass(std::string_view name)
{
    for (std::size_t i = 0; i < kOpClasses; ++i)
    {
        if (name == kNames[i])
        {
            return static_cast<OpClass>(i);
        }
    }
    return std::nullopt;
}

OpClass ClassOf(const profile::OpKey& key)
{
    switch (key.kind)
    {
    case OpKind::Kernel:
        return KernelClass(key.name);
    case OpKind::Gemm:
        return OpClass::Gemm;
    case OpKind::Cudnn:
        return OpClass::Cudnn;
    case OpKind::Memset:
        return OpClass::Memset;
    case OpKind::Memcpy:
        if (key.name == "HtoD")
            return OpClass::MemcpyHtoD;
        if (key.name == "DtoH")
            return OpClass::MemcpyDtoH;
        if (key.name == "DtoD")
            return OpClass::MemcpyDtoD;
        return OpClass::MemcpyOther;
    }
    return OpClass::OtherKernel;
}

} // namespace phantora
