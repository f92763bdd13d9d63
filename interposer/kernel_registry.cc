#include "kernel_registry.h"

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

} // namespace phantora::interposer
