// Names of the program's kernels, as registered by nvcc's generated code
// (__cudaRegisterFunction), looked up by their host stub address at launch.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

namespace phantora::interposer
{

class KernelRegistry
{
public:
    static KernelRegistry& Get();
    void Register(const void* hostFun, const char* deviceName);
    /// Demangled name, or a placeholder naming the address for unregistered functions.
    std::string Name(const void* hostFun) const;

private:
    mutable std::mutex m_mutex;
    std::unordered_map<const void*, std::string> m_names;
};

} // namespace phantora::interposer
