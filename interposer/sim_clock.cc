#include "sim_clock.h"

#include "real_clock.h"

#include <cmath>

namespace phantora::interposer
{

namespace
{
thread_local int64_t t_lastCpuNs = -1;
thread_local int64_t t_nowNs = 0;
} // namespace

SimClock& SimClock::Get()
{
    static SimClock clock;
    return clock;
}

int64_t SimClock::Charge()
{
    const int64_t cpu = ThreadCpuNs();
    if (t_lastCpuNs >= 0 && cpu > t_lastCpuNs)
    {
        const double scaled =
            static_cast<double>(cpu - t_lastCpuNs) * m_scale.load(std::memory_order_relaxed);
        t_nowNs += std::llround(scaled);
    }
    t_lastCpuNs = cpu;
    return t_nowNs;
}

void SimClock::Rebase()
{
    t_lastCpuNs = ThreadCpuNs();
}

void SimClock::Advance(int64_t ns)
{
    t_nowNs += ns;
}

void SimClock::AdvanceTo(int64_t ns)
{
    if (ns > t_nowNs)
    {
        t_nowNs = ns;
    }
}

int64_t SimClock::Now() const
{
    return t_nowNs;
}

} // namespace phantora::interposer
