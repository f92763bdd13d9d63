// Simulated clocks, one per thread.  Where the profile holds a recording of the program,
// the host time between GPU calls is the recorded one (host_time.h).  Otherwise, between
// two intercepted calls a thread's clock advances by the CPU time that thread really used (not wall time, so a loaded host
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

    /// Adds the calling thread's CPU time since its last charge (unless the host-time
    /// profile stands for it, host_time.h); returns its clock.
    int64_t Charge();
    /// The calling thread's clock is about to be seen outside it (a clock read, a hand-over
    /// to another thread): charges what the host-time profile says the gap costs.
    int64_t Expose();
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
