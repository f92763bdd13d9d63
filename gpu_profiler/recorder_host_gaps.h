// The recorder's half of the host-time profile (host_gap_table.h): every boundary call a
// program thread makes (host_boundary.h) is bracketed, and the thread CPU time between the
// end of one and the start of the next is kept with the call's label.  What the recorder
// itself does inside a call (naming it, walking the stack) falls inside the call, not the
// gap.  CUPTI's activity tracing makes every CUDA call dearer, so gaps are recorded in a
// pass of their own with CUPTI off (PHANTORA_RECORD_HOST_ONLY, gpu_profiler record).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

namespace phantora::recorder
{

/// True in the host-time pass: CUPTI stays off and only gaps are written.
bool HostOnly();

/// Brackets one boundary call of the program; only the outermost of nested ones counts
/// (cuBLAS calling cuBLASLt is one call of the program).
class HostBoundary
{
public:
    explicit HostBoundary(std::string_view what)
    {
        if (Begin())
        {
            Record(what);
        }
    }
    /// For calls whose name takes work (a kernel's): \p what runs for an outermost call only.
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
    explicit HostBoundary(F&& what)
    {
        if (Begin())
        {
            Record(what());
        }
    }
    ~HostBoundary();
    HostBoundary(const HostBoundary&) = delete;
    HostBoundary& operator=(const HostBoundary&) = delete;

private:
    /// Reads the thread's CPU clock first thing; true for an outermost call.
    bool Begin();
    void Record(std::string_view what);
    bool m_outer{false};
    int64_t m_enterCpuNs{0};
};

/// The demangled name of a kernel registered with __cudaRegisterFunction, by host stub.
void RememberKernelName(const void* hostFun, const char* deviceName);
std::string KernelName(const void* hostFun);

/// Writes "gap" lines (raw_log.h) for every thread; returns how many.
std::size_t WriteHostGaps(std::FILE* out);

} // namespace phantora::recorder
