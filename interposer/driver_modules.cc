#include "driver_modules.h"

#include "kernel_registry.h"
#include "never_destroyed.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace phantora::interposer
{

namespace
{

template <class T> T At(const unsigned char* p, std::size_t offset)
{
    T v;
    std::memcpy(&v, p + offset, sizeof v);
    return v;
}

bool IsIdentifierChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

/// Whether \p name occurs in \p image as a whole identifier: a PTX `.entry name(` or a
/// cubin's symbol string `\0name\0`.
bool HoldsName(std::string_view image, std::string_view name)
{
    for (std::size_t at = image.find(name); at != std::string_view::npos;
         at = image.find(name, at + 1))
    {
        const bool startsToken = at == 0 || !IsIdentifierChar(image[at - 1]);
        const std::size_t end = at + name.size();
        const bool endsToken = end == image.size() || !IsIdentifierChar(image[end]);
        if (startsToken && endsToken)
        {
            return true;
        }
    }
    return false;
}

constexpr uint32_t kFatbinMagic = 0xBA55ED50;

constinit NeverDestroyed<DriverModules> g_modules;

} // namespace

DriverModules& DriverModules::Get()
{
    return g_modules.Get();
}

std::size_t DriverModules::ImageSize(const void* image)
{
    const auto* p = static_cast<const unsigned char*>(image);
    if (std::memcmp(p,
                    "\x7f"
                    "ELF",
                    4) == 0 &&
        p[4] == 2) // ELF64: a cubin
    {
        const auto phoff = At<uint64_t>(p, 0x20);
        const auto shoff = At<uint64_t>(p, 0x28);
        const auto phentsize = At<uint16_t>(p, 0x36);
        const auto phnum = At<uint16_t>(p, 0x38);
        const auto shentsize = At<uint16_t>(p, 0x3A);
        const auto shnum = At<uint16_t>(p, 0x3C);
        // nvcc and NVRTC put the section header table last; the program headers, if any,
        // come before it.  The larger end is the file's.
        return std::max<std::size_t>(shoff + std::size_t{shnum} * shentsize,
                                     phoff + std::size_t{phnum} * phentsize);
    }
    if (At<uint32_t>(p, 0) == kFatbinMagic)
    {
        return At<uint16_t>(p, 6) + At<uint64_t>(p, 8); // header size + payload size
    }
    // PTX is text (a comment or a directive first).
    if (std::isprint(p[0]) || std::isspace(p[0]))
    {
        return std::strlen(static_cast<const char*>(image));
    }
    return 0;
}

CUmodule DriverModules::Load(const void* image)
{
    auto module = std::make_unique<CUmod_st>();
    const auto* p = static_cast<const unsigned char*>(image);
    // A fat binary's cubins may be compressed: its names are not read, any is accepted.
    if (At<uint32_t>(p, 0) != kFatbinMagic)
    {
        module->image.assign(static_cast<const char*>(image), ImageSize(image));
    }
    std::lock_guard lock(m_mutex);
    CUmodule handle = module.get();
    m_modules.emplace(handle, std::move(module));
    return handle;
}

bool DriverModules::Unload(CUmodule module)
{
    std::lock_guard lock(m_mutex);
    auto it = m_modules.find(module);
    if (it == m_modules.end())
    {
        return false;
    }
    for (const auto& f : it->second->functions)
    {
        m_functions.erase(f.get());
    }
    m_modules.erase(it);
    return true;
}

CUresult DriverModules::Function(CUmodule module, const char* name, CUfunction* function)
{
    std::unique_lock lock(m_mutex);
    auto it = m_modules.find(module);
    if (it == m_modules.end())
    {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    CUmod_st& m = *it->second;
    for (const auto& f : m.functions)
    {
        if (f->name == name)
        {
            *function = f.get();
            return CUDA_SUCCESS;
        }
    }
    if (!m.image.empty() && !HoldsName(m.image, name))
    {
        return CUDA_ERROR_NOT_FOUND;
    }
    auto f = std::make_unique<CUfunc_st>();
    f->name = name;
    f->module = module;
    CUfunction handle = f.get();
    m.functions.push_back(std::move(f));
    m_functions.emplace(handle, module);
    if (!m.layoutsRead)
    {
        m.layoutsRead = true;
        if (m.image.size() > 4 && m.image.rfind("\177ELF", 0) == 0)
        {
            m.layouts = kernel_args::ParamLayoutsOf(m.image);
        }
    }
    const auto found = m.layouts.find(name);
    const std::optional<kernel_args::ParamLayout> layout =
        found == m.layouts.end() ? std::nullopt : std::optional(found->second);
    lock.unlock();
    // A cubin (Triton's) gives the layout, so launches are keyed by their scalar arguments
    // too, as the recorder keys them (gpu_profiler/recorder_launch_hooks.cc); PTX and fat
    // binaries (NVRTC's) by name and launch shape.
    KernelRegistry::Get().RegisterLoaded(handle, name, layout ? &*layout : nullptr);
    *function = handle;
    return CUDA_SUCCESS;
}

bool DriverModules::Known(CUfunction function) const
{
    std::lock_guard lock(m_mutex);
    return m_functions.count(function) != 0;
}

} // namespace phantora::interposer
