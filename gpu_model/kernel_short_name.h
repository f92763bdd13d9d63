// Short kernel names for the run summary, as Nsight Systems shows them: the function's
// base name, without return type, namespaces, template arguments or parameters
// ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>,
// std::array<char*, 3ul> >(int, ...)" -> "vectorized_elementwise_kernel"). Names that
// shorten alike but differ in full get a stable hash of the full name
// ("vectorized_elementwise_kernel#3fa2c1"), so each line still names one kernel. The full
// names stay in --report and --trace.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

namespace phantora
{

class KernelShortNames
{
public:
    /// The base name of one (demangled or mangled) kernel name.
    static std::string BaseName(std::string_view full);
    /// Six hex digits of a hash of \p full, the same on every run and host (FNV-1a).
    static std::string Hash(std::string_view full);

    /// Registers a name that will be shown, so collisions among them can be told apart.
    void Add(const std::string& full);
    /// The name to show: its base name, with the hash if another registered name shares it.
    std::string Get(const std::string& full) const;

private:
    std::map<std::string, std::set<std::string>> m_byBase; ///< base -> full names
};

/// \p text cut to \p width characters with "..." at the end when longer.
std::string Ellipsize(const std::string& text, std::size_t width);

} // namespace phantora
