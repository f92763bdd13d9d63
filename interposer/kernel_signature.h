// Which of a kernel's parameters it writes through, read from its demangled signature.
// The value shadow (value_shadow.h) forgets what a kernel wrote; forgetting what it only
// reads would lose values a program still reads back (torch's all_gather_object compares
// the gathered sizes with kernels, then reads them), so only parameters known to be
// outputs count.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace phantora::interposer
{

/// The parameter types of a demangled function name ("void f<int>(float*, int)" gives
/// "float*" and "int"); empty for a name without a parameter list.
std::vector<std::string> ParameterTypes(std::string_view demangled);

/// What a kernel writes through one of its parameters.
enum class ParamWrites
{
    Nothing, ///< a value, or a struct nothing says the outputs of
    First,   ///< the address in its first 8 bytes
    /// every device address in it but the first: PyTorch's at::native::ReduceOp, whose
    /// pointers are its source, then its destinations and scratch buffers
    AllButFirstAddress,
};

/// By ordinal, what a kernel writes through each parameter of this signature:
///  * a raw pointer to non-const data (`int*`, `float* __restrict__`; not `const float*`,
///    `float const*`, nor `float**`): First;
///  * an array of `char*` (std::array or at::detail::Array), how PyTorch's
///    TensorIterator kernels get their operands, outputs first: First (a second output,
///    which few ops have, is missed);
///  * at::native::ReduceOp (PyTorch's reductions: sum, max, norm): AllButFirstAddress;
///  * anything else (other structs, functors and lambdas, whose captures are in no
///    known order): Nothing.
std::vector<ParamWrites> WrittenPointerParams(std::string_view demangled);

} // namespace phantora::interposer
