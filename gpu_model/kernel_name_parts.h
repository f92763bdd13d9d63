// Reading a demangled kernel name for what its launch moves: the template arguments of one
// of its templates, and the sizes of the C++ element types they name.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace phantora
{

/// Bytes of a C++ element type as demangled names spell it ("float", "c10::BFloat16",
/// "OpaqueType<2u>"); nullopt for anything else.
std::optional<uint32_t> ElementBytes(std::string_view type);

/// The sizes of the element types \p text names, in order ("BinaryFunctor<float, float,
/// float, MulFunctor<float> >": 4, 4, 4, 4).
std::vector<uint32_t> ElementTypesIn(std::string_view text);

/// The top-level arguments of the first "\p tmpl<...>" in \p name, trimmed; empty if it
/// has none.  TemplateArgs("f<4, g<int, 2>, std::array<char*, 3ul> >(int)", "f") is
/// {"4", "g<int, 2>", "std::array<char*, 3ul>"}.
std::vector<std::string_view> TemplateArgs(std::string_view name, std::string_view tmpl);

/// A decimal integer template argument ("8", "3ul", "256u"); nullopt otherwise.
std::optional<uint64_t> IntegerArg(std::string_view arg);

/// The parameter types of the last "{lambda(...)#n}" in \p text: the operands of the
/// functor a TensorIterator loop applies; nullopt if \p text has no lambda with them.
std::optional<std::vector<std::string_view>> LambdaParams(std::string_view text);

} // namespace phantora
