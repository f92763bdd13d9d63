// A library call the simulator times as one op (a cuBLAS GEMM, a cuDNN execute): while
// it runs, every GPU activity it launches is tagged (CUPTI external correlation, kind
// CUSTOM0) with the call's signature, named exactly as the simulation's interposer names
// it, so the raw log stores the call's span under that name, not its kernels.  In the
// host-time pass (no CUPTI) it only brackets the call as a boundary.
#pragma once

#include "recorder_host_gaps.h"

#include <cstdint>
#include <string>

namespace phantora::recorder
{

class LibraryCallScope
{
public:
    /// Only the outermost call on a thread tags: cuBLAS calls cuBLASLt inside, cuDNN may
    /// call cuBLAS.
    /// \p caller: the program's call site (the hook's own __builtin_return_address(0)).
    LibraryCallScope(const std::string& name, const void* caller);
    ~LibraryCallScope();
    LibraryCallScope(const LibraryCallScope&) = delete;
    LibraryCallScope& operator=(const LibraryCallScope&) = delete;

private:
    /// One boundary of the host-time profile (recorder_host_gaps.h), first and last: the
    /// gap before the call ends before the call's own work, and the next starts after it.
    HostBoundary m_boundary;
    bool m_outer;
    uint64_t m_id{0};
};

} // namespace phantora::recorder
