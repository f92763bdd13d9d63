// Simulated clocks, one per thread.  Between two intercepted calls a thread's clock
// advances by the CPU time that thread really used (not wall time, so a loaded host
// does not slow the simulated program), times the scenario's CPU time scale.  Calls
// that wait jump it to the answer the bridge gives.  A thread starts at its
// creator's clock, and a thread woken by another (condition variable, join) moves
// to at least the waker's clock: see thread_handoff.cc for why and how.
#pragma once

#include <atomic>
#include <cstdint>

namespace phantora::interposer
{

class SimClock
{
public:
    static SimClock& Get();

    /// Adds the calling thread's CPU time since its last charge; returns its clock.
    int64_t Charge();
    /// Forgets the calling thread's CPU time so far: the interposer's own work is free.
    void Rebase();
    /// Moves the calling thread's clock forward by \p ns.
    void Advance(int64_t ns);
    /// Moves the calling thread's clock to \p ns if that is later.
    void AdvanceTo(int64_t ns);
    /// The calling thread's clock.
    int64_t Now() const;
    void SetScale(double scale) { m_scale.store(scale, std::memory_order_relaxed); }

private:
    std::atomic<double> m_scale{1.0};
};

} // namespace phantora::interposer
