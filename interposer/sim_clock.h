// The rank's simulated clock.  Between two intercepted calls it advances by the
// CPU time the calling thread really used (not wall time, so a loaded host does
// not slow the simulated program), times the scenario's CPU time scale.  Calls
// that wait jump it to the answer the bridge gives.
#pragma once

#include <atomic>
#include <cstdint>

namespace phantora::interposer
{

class SimClock
{
public:
    static SimClock& Get();

    /// Adds the calling thread's CPU time since its last charge; returns the clock.
    int64_t Charge();
    /// Forgets the calling thread's CPU time so far: the interposer's own work is free.
    void Rebase();
    void Advance(int64_t ns) { m_nowNs.fetch_add(ns, std::memory_order_relaxed); }
    void AdvanceTo(int64_t ns);
    int64_t Now() const { return m_nowNs.load(std::memory_order_relaxed); }
    void SetScale(double scale) { m_scale.store(scale, std::memory_order_relaxed); }

private:
    std::atomic<int64_t> m_nowNs{0};
    std::atomic<double> m_scale{1.0};
};

} // namespace phantora::interposer
