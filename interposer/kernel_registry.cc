#include "kernel_registry.h"

#include "kernel_signature.h"

#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace phantora::interposer
{

KernelRegistry& KernelRegistry::Get()
{
    static KernelRegistry r;
    return r;
}

void KernelRegistry::Register(const void* hostFun, const char* deviceName, const void* fatbin)
{
    m_params.Add(hostFun, fatbin, deviceName);
    std::string name = deviceName ? deviceName : "";
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
    if (status == 0 && demangled)
    {
        name = demangled.get();
    }
    std::lock_guard lock(m_mutex);
    m_names[hostFun] = std::move(name);
}

void KernelRegistry::RegisterLoaded(const void* function, const char* name,
                                    const kernel_args::ParamLayout* layout)
{
    if (!layout)
    {
        Register(function, name, nullptr);
        return;
    }
    m_params.AddLayout(function, name, *layout);
    std::vector<ParamWrites> writes;
    for (const kernel_args::KernelParam& p : *layout)
    {
        // 8 bytes: a pointer, or a 64-bit scalar, which is never a device address
        writes.push_back(p.size == sizeof(uint64_t) ? ParamWrites::First : ParamWrites::Nothing);
    }
    std::lock_guard lock(m_mutex);
    m_names[function] = name ? name : "";
    m_written[function] = std::move(writes);
}

std::string KernelRegistry::Name(const void* hostFun) const
{
    std::lock_guard lock(m_mutex);
    auto it = m_names.find(hostFun);
    if (it != m_names.end())
    {
        return it->second;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "unregistered_kernel@%p", hostFun);
    return buf;
}

const std::vector<ParamWrites>& KernelRegistry::WrittenParams(const void* hostFun)
{
    std::lock_guard lock(m_mutex);
    auto found = m_written.find(hostFun);
    if (found == m_written.end())
    {
        auto name = m_names.find(hostFun);
        found = m_written
                    .emplace(hostFun, name == m_names.end() ? std::vector<ParamWrites>()
                                                            : WrittenPointerParams(name->second))
                    .first;
    }
    return found->second;
}

} // namespace phantora::interposer
