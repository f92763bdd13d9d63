#include "kernel_cost_table.h"

namespace phantora
{

KernelCostTable::KernelCostTable(const KernelSpec& spec) : m_spec(spec) {}

int64_t KernelCostTable::DurationNs(std::string_view kernelName)
{
    auto find = [this](std::string_view key) { return m_spec.durationsNs.find(std::string(key)); };
    auto it = find(kernelName);
    if (it == m_spec.durationsNs.end())
    {
        // "void ns::name<T>(args)": compare on the bare name, the way a user writes it.
        std::string_view bare = kernelName.substr(0, kernelName.find('('));
        if (auto space = bare.rfind(' '); space != std::string_view::npos)
        {
            bare = bare.substr(space + 1);
        }
        it = find(bare);
    }
    if (it != m_spec.durationsNs.end())
    {
        ++m_hits;
        return it->second;
    }
    ++m_misses;
    ++m_missed[std::string(kernelName)];
    return m_spec.defaultNs;
}

} // namespace phantora
