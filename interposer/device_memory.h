// Virtual device memory: addresses in a reserved, inaccessible range of the
// process, handed out first-fit and counted against the scenario's GPU memory.
// Nothing is ever stored there; a host access to it faults, as it would on a
// real device pointer without unified memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace phantora::interposer
{

class DeviceMemory
{
public:
    static DeviceMemory& Get();

    /// nullptr when \p bytes do not fit the remaining capacity.
    void* Allocate(std::size_t bytes);
    /// False when \p p was not returned by Allocate (or was freed already).
    bool Free(void* p);
    bool Contains(const void* p) const;
    /// The live allocation holding \p p: its start and (rounded) size; false if none.
    bool Range(const void* p, uintptr_t& base, std::size_t& size) const;

    /// Virtual memory management (cuMemAddressReserve / cuMemCreate): an address range
    /// costs no capacity; physical handles do, whether mapped or not.
    void* ReserveAddresses(std::size_t bytes, std::size_t alignment);
    bool ReleaseAddresses(void* p);
    bool ChargePhysical(uint64_t bytes);
    void UnchargePhysical(uint64_t bytes);

    void SetCapacity(uint64_t bytes);
    uint64_t Capacity() const { return m_capacity; }
    uint64_t Used() const;
    uint64_t Peak() const { return s_peak.load(); }

    /// Alive until exit, whatever the order of static destruction.
    static std::atomic<uint64_t> s_peak;

private:
    DeviceMemory();

    mutable std::mutex m_mutex;
    uintptr_t m_base{0};
    std::size_t m_span{0};
    uint64_t m_capacity{0};
    uint64_t m_used{0};
    std::map<uintptr_t, std::size_t> m_free;     ///< offset -> length, coalesced
    std::map<uintptr_t, std::size_t> m_live;     ///< address -> rounded length
    std::map<uintptr_t, std::size_t> m_reserved; ///< address -> length (no capacity)

    /// First-fit carve of \p size bytes at an \p alignment multiple; 0 when none fits.
    uintptr_t CarveLocked(std::size_t size, std::size_t alignment);
    void ReturnLocked(uintptr_t offset, std::size_t size);
    void NotePeakLocked();
};

} // namespace phantora::interposer
