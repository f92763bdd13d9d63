#include "sim_clock.h"

#include "real_clock.h"

#include <cmath>

namespace phantora::interposer
{

namespace
{
thread_local int64_t t_lastCpuNs = -1;
}

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
        m_nowNs.fetch_add(std::llround(scaled), std::memory_order_relaxed);
    }
    t_lastCpuNs = cpu;
    return Now();
}

void SimClock::Rebase()
{
    t_lastCpuNs = ThreadCpuNs();
}

void SimClock::AdvanceTo(int64_t ns)
{
    int64_t cur = m_nowNs.load(std::memory_order_relaxed);
    while (cur < ns && !m_nowNs.compare_exchange_weak(cur, ns, std::memory_order_relaxed))
    {
    }
}

} // namespace phantora::interposer
