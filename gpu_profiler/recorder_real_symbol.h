// The recorder stands in front of library entry points (cuBLAS, cuBLASLt, the CUDA
// runtime) and forwards each call to the real one found here.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <initializer_list>

namespace phantora::recorder
{

/// The real \p name: from the global scope when the program linked the library, else from
/// the first of \p sonames already loaded (a library dlopen'ed with RTLD_LOCAL, as Python
/// extensions such as PyTorch are, is not in the global scope).  Aborts, naming the
/// symbol, if none has it: the caller cannot go on without the real call.
template <class F> F RealSymbol(const char* name, std::initializer_list<const char*> sonames)
{
    static_assert(sizeof(F) == sizeof(void*));
    void* p = dlsym(RTLD_NEXT, name);
    for (const char* soname : sonames)
    {
        if (p)
        {
            break;
        }
        if (void* lib = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY))
        {
            p = dlsym(lib, name);
        }
    }
    if (!p)
    {
        std::fprintf(stderr, "phantora recorder: %s not found in %s%s\n", name,
                     sonames.size() ? *sonames.begin() : "the global scope",
                     sonames.size() > 1 ? " or its other versions" : "");
        std::abort();
    }
    F f;
    std::memcpy(&f, &p, sizeof f);
    return f;
}

} // namespace phantora::recorder
