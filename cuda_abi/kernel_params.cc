#include "kernel_params.h"

#include "bytes_at.h"
#include "elf_sections.h"
#include "fatbin_cubins.h"
#include "kernel_work.h"

#include <algorithm>
#include <cstring>

namespace phantora::kernel_args
{

namespace
{
constexpr std::string_view kInfoPrefix = ".nv.info.";

// .nv.info records: a format byte, an attribute byte, then a value whose size the
// format gives (EIFMT_NVAL none, BVAL 1 byte, HVAL 2 bytes, SVAL a u16 size and data).
enum : uint8_t
{
    kFormatNone = 1,
    kFormatByte = 2,
    kFormatHalf = 3,
    kFormatSized = 4,
};
constexpr uint8_t kAttrKparamInfo = 0x17;

template <class T> T Read(const char* p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

ParamLayout ReadInfo(std::string_view info)
{
    ParamLayout layout;
    std::size_t at = 0;
    while (at + 2 <= info.size())
    {
        const auto format = static_cast<uint8_t>(info[at]);
        const auto attribute = static_cast<uint8_t>(info[at + 1]);
        at += 2;
        std::size_t size = 0;
        if (format == kFormatByte)
        {
            size = 1;
        }
        else if (format == kFormatHalf)
        {
            size = 2;
        }
        else if (format == kFormatSized)
        {
            uint16_t sized = 0;
            if (!ReadAt(info, at, sized))
            {
                break;
            }
            size = sized;
            at += 2;
        }
        else if (format != kFormatNone)
        {
            break; // an unknown format: its length is unknown, so nothing after it can be read
        }
        if (at + size > info.size())
        {
            break;
        }
        if (attribute == kAttrKparamInfo && format == kFormatSized && size >= 12)
        {
            // u32 index, u16 ordinal, u16 offset, u32 flags with the size in bits 18..31
            const char* p = info.data() + at;
            const uint16_t ordinal = Read<uint16_t>(p + 4);
            const uint16_t offset = Read<uint16_t>(p + 6);
            const uint32_t bits = Read<uint32_t>(p + 8);
            if (layout.size() <= ordinal)
            {
                layout.resize(ordinal + 1u);
            }
            layout[ordinal] = {offset, (bits >> 18) & 0x3fff};
        }
        at += size;
    }
    return layout;
}
} // namespace

std::unordered_map<std::string, ParamLayout> ParamLayoutsOf(std::string_view cubin)
{
    std::unordered_map<std::string, ParamLayout> out;
    ForEachElfSection(cubin,
                      [&out](std::string_view name, std::string_view data)
                      {
                          if (name.size() > kInfoPrefix.size() && name.starts_with(kInfoPrefix))
                          {
                              out[std::string(name.substr(kInfoPrefix.size()))] = ReadInfo(data);
                          }
                      });
    return out;
}

std::map<std::string, ParamLayout> ParamLayoutsInImage(std::string_view bytes)
{
    std::map<std::string, ParamLayout> out;
    auto addCubin = [&out](std::string_view cubin)
    {
        for (auto& [name, layout] : ParamLayoutsOf(cubin))
        {
            out.try_emplace(name, std::move(layout));
        }
    };
    auto addContainer = [&addCubin](std::string_view container)
    {
        for (std::string_view entry : CubinEntries(container))
        {
            addCubin(CubinImage(entry));
        }
    };
    std::vector<std::string_view> containers = FatbinContainers(bytes);
    if (containers.empty())
    {
        ForEachElfSection(bytes,
                          [&containers](std::string_view name, std::string_view data)
                          {
                              if (name == ".nv_fatbin")
                              {
                                  containers = FatbinContainers(data);
                              }
                          });
    }
    for (std::string_view c : containers)
    {
        addContainer(c);
    }
    if (containers.empty())
    {
        addCubin(bytes);
    }
    return out;
}

std::string ArgFacts(const ParamLayout& layout, void* const* args)
{
    std::string out;
    if (!args)
    {
        return out;
    }
    for (std::size_t i = 0; i < layout.size(); ++i)
    {
        const char* p = static_cast<const char*>(args[i]);
        if (!p)
        {
            continue;
        }
        uint64_t value = 0;
        bool keep = false;
        switch (layout[i].size)
        {
        case 4:
            value = Read<uint32_t>(p);
            keep = value < (1u << 23);
            break;
        case 8:
            value = Read<uint64_t>(p);
            keep = value < (1ull << 32);
            break;
        default:
            break;
        }
        if (keep)
        {
            if (!out.empty())
            {
                out += ',';
            }
            out += std::to_string(i);
            out += '=';
            out += std::to_string(value);
        }
    }
    return out;
}

void KernelParamIndex::Add(const void* key, const void* fatbin, const char* mangled)
{
    const std::string_view container = FatbinContainerAt(fatbin);
    std::lock_guard lock(m_mutex);
    Kernel& k = m_kernels[key];
    k = Kernel{};
    if (container.empty() || !mangled)
    {
        k.looked = true; // nothing to read it from
        return;
    }
    k.container = container.data();
    k.mangled = mangled;
    auto [it, added] = m_containers.try_emplace(container.data());
    if (added)
    {
        it->second.entries = CubinEntries(container);
        std::reverse(it->second.entries.begin(), it->second.entries.end());
    }
}

void KernelParamIndex::AddLayout(const void* key, const char* mangled, ParamLayout layout)
{
    std::lock_guard lock(m_mutex);
    ParamLayout& given = m_given[key];
    given = std::move(layout);
    Kernel& k = m_kernels[key];
    k = Kernel{};
    k.mangled = mangled ? mangled : "";
    k.looked = true;
    k.layout = &given;
}

const ParamLayout* KernelParamIndex::Resolve(Kernel& k)
{
    if (k.looked)
    {
        return k.layout;
    }
    Container& c = m_containers.at(k.container);
    auto found = c.layouts.find(k.mangled);
    while (found == c.layouts.end() && !c.entries.empty())
    {
        const std::string cubin = CubinImage(c.entries.back());
        c.entries.pop_back();
        for (auto& [name, layout] : ParamLayoutsOf(cubin))
        {
            c.layouts.try_emplace(name, std::move(layout));
        }
        found = c.layouts.find(k.mangled);
    }
    k.looked = true;
    k.layout = found == c.layouts.end() ? nullptr : &found->second;
    return k.layout;
}

const ParamLayout* KernelParamIndex::Find(const void* key)
{
    std::lock_guard lock(m_mutex);
    auto it = m_kernels.find(key);
    return it == m_kernels.end() ? nullptr : Resolve(it->second);
}

std::string KernelParamIndex::Facts(const void* key, void* const* args)
{
    const ParamLayout* layout = Find(key);
    return layout ? ArgFacts(*layout, args) : std::string();
}

std::string KernelParamIndex::Work(const void* key, void* const* args, uint32_t blocks)
{
    std::string mangled;
    const ParamLayout* layout = nullptr;
    {
        std::lock_guard lock(m_mutex);
        auto it = m_kernels.find(key);
        if (it == m_kernels.end())
        {
            return {};
        }
        layout = Resolve(it->second);
        mangled = it->second.mangled;
    }
    return layout ? WorkFacts(mangled, *layout, args, blocks) : std::string();
}

} // namespace phantora::kernel_args
