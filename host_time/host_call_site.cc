#include "host_call_site.h"

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <dlfcn.h>
#include <link.h>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <unwind.h>

namespace phantora::host_time
{

namespace
{

/// The address range a loaded module's segments span.
struct Range
{
    uintptr_t begin{0};
    uintptr_t end{0};
    bool Holds(uintptr_t a) const { return a >= begin && a < end; }
};

/// The range of the module that holds \p addr, found once per caller (dladdr walks every
/// loaded object, far too slow to ask for each frame of each call).
Range ModuleRange(const void* addr)
{
    Dl_info info{};
    if (!dladdr(addr, &info))
    {
        return {};
    }
    struct Query
    {
        uintptr_t base;
        Range range;
    } q{reinterpret_cast<uintptr_t>(info.dli_fbase), {}};
    dl_iterate_phdr(
        [](dl_phdr_info* m, size_t, void* data)
        {
            auto* q = static_cast<Query*>(data);
            for (int i = 0; i < m->dlpi_phnum; ++i)
            {
                const ElfW(Phdr)& ph = m->dlpi_phdr[i];
                const uintptr_t lo = m->dlpi_addr + ph.p_vaddr;
                if (ph.p_type == PT_LOAD && q->base >= lo && q->base < lo + ph.p_memsz + 1)
                {
                    uintptr_t begin = UINTPTR_MAX, end = 0;
                    for (int j = 0; j < m->dlpi_phnum; ++j)
                    {
                        if (m->dlpi_phdr[j].p_type == PT_LOAD)
                        {
                            const uintptr_t b = m->dlpi_addr + m->dlpi_phdr[j].p_vaddr;
                            begin = std::min(begin, b);
                            end = std::max(end, b + m->dlpi_phdr[j].p_memsz);
                        }
                    }
                    q->range = {begin, end};
                    return 1;
                }
            }
            return 0;
        },
        &q);
    return q.range;
}

struct Walk
{
    Range self;
    void* found{nullptr};
    int depth{0};
};

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
    if (!w->self.Holds(reinterpret_cast<uintptr_t>(pc)))
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
    // One module per process asks (the interposer, or the recorder): its range is fixed.
    static const Range selfRange = ModuleRange(self);
    Walk w{selfRange};
    _Unwind_Backtrace(Visit, &w);
    return w.found ? CallSiteOf(w.found) : "?";
}

std::string CallSiteOf(const void* returnAddress)
{
    void* pc = const_cast<void*>(returnAddress);
    SiteCache& c = Cache();
    {
        std::shared_lock lock(c.mutex);
        if (auto it = c.names.find(pc); it != c.names.end())
        {
            return it->second;
        }
    }
    std::string name = Name(pc);
    std::unique_lock lock(c.mutex);
    return c.names.try_emplace(pc, std::move(name)).first->second;
}

} // namespace phantora::host_time
