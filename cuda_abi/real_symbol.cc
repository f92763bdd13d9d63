#include "real_symbol.h"

#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace phantora::real_symbol
{

namespace
{

struct Cache
{
    std::mutex mutex;
    std::unordered_map<std::string, void*> found;
};

/// Never destroyed: the interposer resolves pthread_join and the like while threads are
/// joined during exit, after static destructors ran.
Cache& TheCache()
{
    static Cache* const cache = std::make_unique<Cache>().release();
    return *cache;
}

void* Lookup(const Query& q)
{
    void* p = q.version ? dlvsym(RTLD_NEXT, q.name, q.version) : nullptr;
    if (!p)
    {
        p = dlsym(RTLD_NEXT, q.name);
    }
    for (const char* soname : q.sonames)
    {
        if (p)
        {
            break;
        }
        if (void* lib = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY))
        {
            p = dlsym(lib, q.name);
        }
    }
    return p;
}

std::string Describe(const Query& q)
{
    std::string where = "the libraries loaded after this one";
    if (q.version)
    {
        where += std::string(" (version ") + q.version + " or any)";
    }
    for (const char* soname : q.sonames)
    {
        where += std::string(", ") + soname;
    }
    return std::string("cannot find the real ") + (q.name ? q.name : "(null)") + " in " + where;
}

} // namespace

MissingSymbol::MissingSymbol(const Query& query) : std::runtime_error(Describe(query)) {}

void* Find(const Query& query)
{
    if (!query.name)
    {
        return nullptr;
    }
    Cache& cache = TheCache();
    {
        std::lock_guard lock(cache.mutex);
        if (auto it = cache.found.find(query.name); it != cache.found.end())
        {
            return it->second;
        }
    }
    // Not under the lock: the loader takes its own lock in dlsym and dlopen, and a library
    // constructor running under it may start a thread, whose hook then resolves a symbol.
    void* p = Lookup(query);
    if (p)
    {
        std::lock_guard lock(cache.mutex);
        cache.found.emplace(query.name, p);
    }
    return p;
}

void* Require(const Query& query)
{
    if (void* p = Find(query))
    {
        return p;
    }
    throw MissingSymbol(query);
}

} // namespace phantora::real_symbol
