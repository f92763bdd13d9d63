// The real entry point behind a hook, for the calls the interposer passes on to the
// system (pthread_*, sleeps) or answers with the real runtime's tables
// (cudaGetErrorString): real_symbol.h, with the rank's way of failing.
#pragma once

#include "cuda_abi/real_symbol.h"
#include "rank_client.h"

namespace phantora::interposer
{

/// The real \p name (its \p version first, when given) in the libraries loaded after the
/// interposer.  Ends the rank naming it if there is none: the hook cannot go on without it.
template <class F> F RealFunction(const char* name, const char* version = nullptr)
{
    try
    {
        return real_symbol::As<F>(real_symbol::Require({.name = name, .version = version}));
    }
    catch (const real_symbol::MissingSymbol& e)
    {
        Fatal(e.what());
    }
}

/// The real \p name, or nullptr where no library loaded after the interposer has it.
template <class F> F OptionalRealFunction(const char* name)
{
    return real_symbol::As<F>(real_symbol::Find({.name = name}));
}

} // namespace phantora::interposer
