#include "device_memory.h"

#include "rank_client.h"

#include <sys/mman.h>

namespace phantora::interposer
{

std::atomic<uint64_t> DeviceMemory::s_peak{0};

namespace
{
// cudaMalloc guarantees 256-byte alignment; callers rely on it.
constexpr std::size_t kAlign = 256;
// Address space to hand out: larger than any GPU, and costs nothing while PROT_NONE.
constexpr std::size_t kSpan = std::size_t{1} << 42; // 4 TiB
} // namespace

DeviceMemory& DeviceMemory::Get()
{
    static DeviceMemory mem;
    return mem;
}

DeviceMemory::DeviceMemory()
{
    void* p = mmap(nullptr, kSpan, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
    {
        Fatal("cannot reserve address space for virtual device memory");
    }
    m_base = reinterpret_cast<uintptr_t>(p);
    m_span = kSpan;
    m_free[0] = kSpan;
}

void DeviceMemory::SetCapacity(uint64_t bytes)
{
    std::lock_guard lock(m_mutex);
    m_capacity = bytes;
}

uint64_t DeviceMemory::Used() const
{
    std::lock_guard lock(m_mutex);
    return m_used;
}

bool DeviceMemory::Contains(const void* p) const
{
    const auto a = reinterpret_cast<uintptr_t>(p);
    return a >= m_base && a < m_base + m_span;
}

bool DeviceMemory::Range(const void* p, uintptr_t& base, std::size_t& size) const
{
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard lock(m_mutex);
    auto it = m_live.upper_bound(a);
    if (it == m_live.begin())
    {
        return false;
    }
    --it;
    if (a >= it->first + it->second)
    {
        return false;
    }
    base = it->first;
    size = it->second;
    return true;
}

void* DeviceMemory::Allocate(std::size_t bytes)
{
    const std::size_t size = ((bytes == 0 ? 1 : bytes) + kAlign - 1) / kAlign * kAlign;
    std::lock_guard lock(m_mutex);
    if (m_used + size > m_capacity)
    {
        return nullptr;
    }
    for (auto it = m_free.begin(); it != m_free.end(); ++it)
    {
        if (it->second < size)
        {
            continue;
        }
        const uintptr_t offset = it->first;
        const std::size_t rest = it->second - size;
        m_free.erase(it);
        if (rest > 0)
        {
            m_free[offset + size] = rest;
        }
        const uintptr_t addr = m_base + offset;
        m_live[addr] = size;
        m_used += size;
        uint64_t peak = s_peak.load();
        while (m_used > peak && !s_peak.compare_exchange_weak(peak, m_used))
        {
        }
        return reinterpret_cast<void*>(addr);
    }
    return nullptr;
}

bool DeviceMemory::Free(void* p)
{
    std::lock_guard lock(m_mutex);
    auto it = m_live.find(reinterpret_cast<uintptr_t>(p));
    if (it == m_live.end())
    {
        return false;
    }
    uintptr_t offset = it->first - m_base;
    std::size_t size = it->second;
    m_used -= size;
    m_live.erase(it);
    // coalesce with the free neighbours so long runs do not fragment the span
    auto next = m_free.lower_bound(offset);
    if (next != m_free.end() && next->first == offset + size)
    {
        size += next->second;
        next = m_free.erase(next);
    }
    if (next != m_free.begin())
    {
        auto prev = std::prev(next);
        if (prev->first + prev->second == offset)
        {
            offset = prev->first;
            size += prev->second;
            m_free.erase(prev);
        }
    }
    m_free[offset] = size;
    return true;
}

} // namespace phantora::interposer
