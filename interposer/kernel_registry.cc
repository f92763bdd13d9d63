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
