#include "pinned_host_memory.h"

namespace phantora::interposer
{

PinnedHostMemory& PinnedHostMemory::Get()
{
    static PinnedHostMemory* m = new PinnedHostMemory; // used until the process ends
    return *m;
}

void PinnedHostMemory::Add(const void* p, std::size_t bytes)
{
    if (!p || bytes == 0)
    {
        return;
    }
    const auto at = reinterpret_cast<uintptr_t>(p);
    std::lock_guard lock(m_mutex);
    m_ranges[at] = at + bytes;
}

bool PinnedHostMemory::Remove(const void* p)
{
    std::lock_guard lock(m_mutex);
    return m_ranges.erase(reinterpret_cast<uintptr_t>(p)) > 0;
}

bool PinnedHostMemory::Contains(const void* p) const
{
    const auto at = reinterpret_cast<uintptr_t>(p);
    std::lock_guard lock(m_mutex);
    auto it = m_ranges.upper_bound(at);
    if (it == m_ranges.begin())
    {
        return false;
    }
    --it;
    return at < it->second;
}

} // namespace phantora::interposer
