#include "host_call_site.h"

#include <cstdint>
#include <cstdio>
#include <dlfcn.h>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <unwind.h>

namespace phantora::host_time
{

namespace
{

struct Walk
{
    const void* selfBase;
    void* found{nullptr};
    int depth{0};
};

const void* ModuleBase(const void* addr)
{
    Dl_info info{};
    return dladdr(addr, &info) ? info.dli_fbase : nullptr;
}

// libgcc's unwinder directly: glibc's backtrace() dlopens libgcc_s on first use, which
// must not happen inside another library's constructor (the loader's lock is held).
_Unwind_Reason_Code Visit(_Unwind_Context* ctx, void* arg)
{
    auto* w = static_cast<Walk*>(arg);
    if (++w->depth > 32)
    {
        return _URC_END_OF_STACK;
    }
    void* pc = reinterpret_cast<void*>(_Unwind_GetIP(ctx));
    if (!pc)
    {
        return _URC_END_OF_STACK;
    }
    if (ModuleBase(pc) != w->selfBase)
    {
        w->found = pc;
        return _URC_END_OF_STACK;
    }
    return _URC_NO_REASON;
}

struct SiteCache
{
    std::shared_mutex mutex;
    std::unordered_map<void*, std::string> names;
};

SiteCache& Cache()
{
    static auto* cache = new SiteCache; // never destroyed: hooks run during exit too
    return *cache;
}

std::string Name(void* pc)
{
    Dl_info info{};
    if (!dladdr(pc, &info) || !info.dli_fname)
    {
        return "?";
    }
    std::string file = info.dli_fname;
    file = file.substr(file.rfind('/') + 1);
    char offset[32];
    std::snprintf(offset, sizeof offset, "+0x%llx",
                  static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(pc) -
                                                  reinterpret_cast<uintptr_t>(info.dli_fbase)));
    return file + offset;
}

} // namespace

std::string CallSiteOutside(const void* self)
{
    Walk w{ModuleBase(self)};
    _Unwind_Backtrace(Visit, &w);
    if (!w.found)
    {
        return "?";
    }
    SiteCache& c = Cache();
    {
        std::shared_lock lock(c.mutex);
        if (auto it = c.names.find(w.found); it != c.names.end())
        {
            return it->second;
        }
    }
    std::string name = Name(w.found);
    std::unique_lock lock(c.mutex);
    return c.names.try_emplace(w.found, std::move(name)).first->second;
}

} // namespace phantora::host_time
