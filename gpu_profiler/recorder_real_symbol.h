// The recorder stands in front of library entry points (cuBLAS, cuBLASLt, the CUDA
// runtime) and forwards each call to the real one found here (real_symbol.h).
#pragma once

#include "cuda_abi/real_symbol.h"

#include <cstdio>
#include <cstdlib>
#include <initializer_list>

namespace phantora::recorder
{

/// The real \p name: from the global scope when the program linked the library, else from
/// the first of \p sonames already loaded.  Aborts, naming the symbol, if none has it: the
/// caller cannot go on without the real call.
template <class F> F RealSymbol(const char* name, std::initializer_list<const char*> sonames)
{
    try
    {
        return real_symbol::As<F>(
            real_symbol::Require({.name = name, .sonames = {sonames.begin(), sonames.size()}}));
    }
    catch (const real_symbol::MissingSymbol& e)
    {
        std::fprintf(stderr, "phantora recorder: %s\n", e.what());
        std::abort();
    }
}

} // namespace phantora::recorder
