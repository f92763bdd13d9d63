// Host memory the program pinned (cudaHostAlloc, cudaMallocHost, cudaHostRegister): a
// copy from or to it runs at the link's rate, one from or to pageable memory goes through
// the driver's staging buffer at a fraction of it (8-10 GB/s against 55 on an H200 at 2 MB
// and more), so the bridge estimates the two apart (op_estimator.h, ScaledCopy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace phantora::interposer
{

class PinnedHostMemory
{
public:
    static PinnedHostMemory& Get();

    void Add(const void* p, std::size_t bytes);
    /// Forgets the range starting at \p p; false if none does.
    bool Remove(const void* p);
    bool Contains(const void* p) const;

private:
    mutable std::mutex m_mutex;
    std::map<uintptr_t, uintptr_t> m_ranges; ///< start -> end
};

} // namespace phantora::interposer
