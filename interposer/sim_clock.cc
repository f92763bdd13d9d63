#include "sim_clock.h"

#include "host_time.h"
#include "real_clock.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

namespace phantora::interposer
{

namespace
{
thread_local int64_t t_lastCpuNs = -1;
thread_local int64_t t_nowNs = 0;

/// The thread CPU time that one reading of the clock leaves on the next interval:
/// reading it is a system call, and the part after the kernel samples the clock
/// (the return, the rest of the hook) would be charged to the program as if it were
/// its own work, once per intercepted call.  Measured once per process as the
/// smallest of many back-to-back intervals, so the program never gets less than it used.
int64_t ReadingCostNs()
{
    static const int64_t cost = []
    {
        int64_t least = INT64_MAX;
        for (int i = 0; i < 2000; ++i)
        {
            const int64_t a = ThreadCpuNs();
            const int64_t b = ThreadCpuNs();
            least = std::min(least, b - a);
        }
        return std::max<int64_t>(least, 0);
    }();
    return cost;
}
} // namespace

SimClock& SimClock::Get()
{
    static SimClock clock;
    return clock;
}

int64_t SimClock::Charge()
{
    const int64_t readingNs = ReadingCostNs(); // first: measuring it once costs CPU time too
    const int64_t cpu = ThreadCpuNs();
    if (t_lastCpuNs >= 0 && cpu > t_lastCpuNs + readingNs)
    {
        const double scaled = static_cast<double>(cpu - t_lastCpuNs - readingNs) *
                              m_scale.load(std::memory_order_relaxed);
        t_nowNs += HostTime::Get().OnLocalCpu(std::llround(scaled));
    }
    t_lastCpuNs = cpu;
    return t_nowNs;
}

int64_t SimClock::Expose()
{
    t_nowNs += HostTime::Get().OnExpose();
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
