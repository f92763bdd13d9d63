#include "device_memory.h"

#include "fatal.h"

#include <algorithm>
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
    for (const auto* ranges : {&m_live, &m_reserved})
    {
        auto it = ranges->upper_bound(a);
        if (it == ranges->begin())
        {
            continue;
        }
        --it;
        if (a < it->first + it->second)
        {
            base = it->first;
            size = it->second;
            return true;
        }
    }
    return false;
}

uintptr_t DeviceMemory::CarveLocked(std::size_t size, std::size_t alignment)
{
    for (auto it = m_free.begin(); it != m_free.end(); ++it)
    {
        const uintptr_t start = m_base + it->first;
        const uintptr_t aligned = (start + alignment - 1) / alignment * alignment;
        const std::size_t lead = aligned - start;
        if (it->second < lead + size)
        {
            continue;
        }
        const uintptr_t offset = it->first;
        const std::size_t rest = it->second - lead - size;
        m_free.erase(it);
        if (lead > 0)
        {
            m_free[offset] = lead;
        }
        if (rest > 0)
        {
            m_free[offset + lead + size] = rest;
        }
        return aligned;
    }
    return 0;
}

void DeviceMemory::ReturnLocked(uintptr_t offset, std::size_t size)
{
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
}

void DeviceMemory::NotePeakLocked()
{
    uint64_t peak = s_peak.load();
    while (m_used > peak && !s_peak.compare_exchange_weak(peak, m_used))
    {
    }
}

void* DeviceMemory::Allocate(std::size_t bytes)
{
    const std::size_t size = ((bytes == 0 ? 1 : bytes) + kAlign - 1) / kAlign * kAlign;
    std::lock_guard lock(m_mutex);
    if (m_used + size > m_capacity)
    {
        return nullptr;
    }
    const uintptr_t addr = CarveLocked(size, kAlign);
    if (addr == 0)
    {
        return nullptr;
    }
    m_live[addr] = size;
    m_used += size;
    NotePeakLocked();
    return reinterpret_cast<void*>(addr);
}

bool DeviceMemory::Free(void* p)
{
    std::lock_guard lock(m_mutex);
    auto it = m_live.find(reinterpret_cast<uintptr_t>(p));
    if (it == m_live.end())
    {
        return false;
    }
    m_used -= it->second;
    ReturnLocked(it->first - m_base, it->second);
    m_live.erase(it);
    return true;
}

void* DeviceMemory::ReserveAddresses(std::size_t bytes, std::size_t alignment)
{
    const std::size_t size = (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    std::lock_guard lock(m_mutex);
    const uintptr_t addr = CarveLocked(size, std::max(alignment, kAlign));
    if (addr == 0)
    {
        return nullptr;
    }
    m_reserved[addr] = size;
    return reinterpret_cast<void*>(addr);
}

bool DeviceMemory::ReleaseAddresses(void* p)
{
    std::lock_guard lock(m_mutex);
    auto it = m_reserved.find(reinterpret_cast<uintptr_t>(p));
    if (it == m_reserved.end())
    {
        return false;
    }
    ReturnLocked(it->first - m_base, it->second);
    m_reserved.erase(it);
    return true;
}

bool DeviceMemory::ChargePhysical(uint64_t bytes)
{
    std::lock_guard lock(m_mutex);
    if (m_used + bytes > m_capacity)
    {
        return false;
    }
    m_used += bytes;
    NotePeakLocked();
    return true;
}

void DeviceMemory::UnchargePhysical(uint64_t bytes)
{
    std::lock_guard lock(m_mutex);
    m_used -= std::min(m_used, bytes);
}

} // namespace phantora::interposer
