// The real entry point behind one a preloaded library stands in for: the simulator's
// interposer (pthread_*, sleeps, cudaGetErrorString) and the recorder (cuBLAS, cuBLASLt,
// the CUDA runtime) both forward calls to the library that would have answered them.
// Linked into each (a static library, hidden symbols), so "next" means the objects loaded
// after whichever of the two asks.
#pragma once

#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

namespace phantora::real_symbol
{

/// Where to look for a symbol, in order: its \p version in the objects loaded after the
/// caller (glibc keeps compatibility versions of pthread_cond_* with another ABI, and an
/// unversioned lookup may return one of them), then any version there, then each of
/// \p sonames already loaded (a library dlopen'ed with RTLD_LOCAL, as Python extensions
/// such as PyTorch are, is not in the global scope).
struct Query
{
    const char* name{nullptr};
    const char* version{nullptr};
    std::span<const char* const> sonames{};
};

/// A required symbol that is nowhere to be found; what() names it and where it was looked for.
class MissingSymbol : public std::runtime_error
{
public:
    explicit MissingSymbol(const Query& query);
};

/// The symbol's address, or nullptr if none has it.  Found addresses are cached by name
/// (one process asks for a name the same way everywhere); misses are not, so a library
/// loaded later can still supply it.
void* Find(const Query& query);

/// As Find, but throws MissingSymbol when none has it.
void* Require(const Query& query);

/// A symbol's address as the function pointer type \p F.
template <class F> F As(void* address)
{
    static_assert(sizeof(F) == sizeof(void*));
    F f;
    std::memcpy(&f, &address, sizeof f);
    return f;
}

} // namespace phantora::real_symbol
