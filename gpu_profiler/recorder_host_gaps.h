// The recorder's half of the host-time profile (host_gap_table.h): every boundary call a
// program thread makes (host_boundary.h) is bracketed, and the thread CPU time between the
// end of one and the start of the next is kept with the call's label.  What the recorder
// itself does inside a call (naming it, walking the stack) falls inside the call, not the
// gap.  CUPTI's activity tracing makes every CUDA call dearer, so gaps are recorded in a
// pass of their own with CUPTI off (PHANTORA_RECORD_HOST_ONLY, gpu_profiler record).
#pragma once

#include <cstdint>
#include <cstddef>
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
///
/// \p caller is the hook's own return address (__builtin_return_address(0) in the
/// function the program called): the call site, named as the interposer names it after
/// walking its stack to the first frame outside it, for a fraction of the cost.
class HostBoundary
{
public:
    HostBoundary(std::string_view what, const void* caller)
    {
        if (Begin())
        {
            Record(what, caller);
        }
    }
    /// For calls whose name takes work (a kernel's): \p what runs for an outermost call only.
    template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
    HostBoundary(F&& what, const void* caller)
    {
        if (Begin())
        {
            Record(what(), caller);
        }
    }
    ~HostBoundary();
    /// After the real copy returned (\p status 0: it succeeded): a device-to-host copy of
    /// 1..kMaxReadbackBytes (\p kind a cudaMemcpyKind) keeps the bytes it read, for the
    /// simulation to return in its place (readback_table.h).  A synchronous copy's now; an
    /// asynchronous one's when the thread next synchronises (a stream, event or device
    /// synchronisation or a synchronous copy ends), which is when the program may read
    /// them (PyTorch's .item(): cudaMemcpyAsync, then cudaStreamSynchronize).
    void ReadBack(void* dst, const void* src, std::size_t count, int kind, bool synchronous,
                  int status);
    HostBoundary(const HostBoundary&) = delete;
    HostBoundary& operator=(const HostBoundary&) = delete;

private:
    /// Reads the thread's CPU clock first thing; true for an outermost call.
    bool Begin();
    void Record(std::string_view what, const void* caller);
    bool m_outer{false};
    bool m_costed{false};    ///< the call's own host time is kept (it does not wait)
    bool m_synchronises{false}; ///< pending read-backs are complete when it returns
    std::size_t m_index{0};  ///< the call's position in its thread's sequence
    int64_t m_enterNs{0};
    int64_t m_callStartNs{0}; ///< after the recorder's own work: where the call itself starts
    int64_t m_blockedAtCallStart{0};
};

/// The demangled name of a kernel registered with __cudaRegisterFunction, by host stub.
void RememberKernelName(const void* hostFun, const char* deviceName);
std::string KernelName(const void* hostFun);

/// Writes "gap" and "readback" lines (raw_log.h) for every thread; returns how many gaps.
std::size_t WriteHostGaps(std::FILE* out);

} // namespace phantora::recorder
