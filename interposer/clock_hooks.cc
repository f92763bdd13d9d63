// clock_gettime, gettimeofday and time answer the rank's simulated clock, so the
// program's own timers measure the simulated cluster.  Two kinds of callers get
// the host's clock instead: CPU-time clocks (they measure this process, not the
// cluster), and ZeroMQ, whose timers and poll timeouts must follow real time or
// the rank's link to the bridge would stall.
#include "rank_client.h"
#include "real_clock.h"
#include "sim_clock.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <link.h>
#include <mutex>
#include <sys/time.h>
#include <vector>

using namespace phantora::interposer;

namespace
{

struct Range
{
    uintptr_t begin;
    uintptr_t end;
};

// A monotonic clock that starts at zero looks broken to some programs; real ones
// count from boot.  Any fixed offset works as long as every rank uses the same.
constexpr int64_t kMonotonicBaseNs = 1000LL * 1000000000LL;

int64_t RealtimeBaseNs()
{
    // All ranks of one run share the epoch the launcher chose, so their wall-clock
    // timestamps agree; without one, the process start stands in.
    static const int64_t base = []
    {
        if (const char* e = std::getenv("PHANTORA_EPOCH_NS"))
        {
            return static_cast<int64_t>(std::atoll(e));
        }
        return RealNowNs(CLOCK_REALTIME);
    }();
    return base;
}

std::vector<Range> FindExemptRanges()
{
    std::vector<Range> ranges;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data)
        {
            auto* out = static_cast<std::vector<Range>*>(data);
            if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libzmq"))
            {
                return 0;
            }
            for (int i = 0; i < info->dlpi_phnum; ++i)
            {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
                {
                    const uintptr_t b = info->dlpi_addr + ph.p_vaddr;
                    out->push_back({b, b + ph.p_memsz});
                }
            }
            return 0;
        },
        &ranges);
    return ranges;
}

bool CallerIsExempt(const void* returnAddress)
{
    static const std::vector<Range> ranges = FindExemptRanges();
    const auto a = reinterpret_cast<uintptr_t>(returnAddress);
    for (const Range& r : ranges)
    {
        if (a >= r.begin && a < r.end)
        {
            return true;
        }
    }
    return false;
}

bool Simulated(clockid_t id)
{
    switch (id)
    {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
        return true;
    default:
        return false;
    }
}

int64_t SimulatedNs(clockid_t id)
{
    SimClock::Get().Charge();
    const int64_t now = SimClock::Get().Expose();
    const bool wall = id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
    return now + (wall ? RealtimeBaseNs() : kMonotonicBaseNs);
}

const bool g_active = RankClient::Configured();

} // namespace

extern "C"
{

    int clock_gettime(clockid_t id, timespec* ts)
    {
        if (!g_active || !Simulated(id) || CallerIsExempt(__builtin_return_address(0)))
        {
            return RealClockGettime(id, ts);
        }
        const int64_t ns = SimulatedNs(id);
        ts->tv_sec = static_cast<time_t>(ns / 1000000000LL);
        ts->tv_nsec = static_cast<long>(ns % 1000000000LL);
        return 0;
    }

    int gettimeofday(struct timeval* tv, void* tz)
    {
        if (!g_active || CallerIsExempt(__builtin_return_address(0)))
        {
            timespec ts{};
            RealClockGettime(CLOCK_REALTIME, &ts);
            tv->tv_sec = ts.tv_sec;
            tv->tv_usec = static_cast<suseconds_t>(ts.tv_nsec / 1000);
            if (tz)
            {
                std::memset(tz, 0, sizeof(struct timezone));
            }
            return 0;
        }
        const int64_t ns = SimulatedNs(CLOCK_REALTIME);
        tv->tv_sec = static_cast<time_t>(ns / 1000000000LL);
        tv->tv_usec = static_cast<suseconds_t>((ns % 1000000000LL) / 1000);
        if (tz)
        {
            std::memset(tz, 0, sizeof(struct timezone));
        }
        return 0;
    }

    time_t time(time_t* out)
    {
        const int64_t ns = g_active ? SimulatedNs(CLOCK_REALTIME) : RealNowNs(CLOCK_REALTIME);
        const auto t = static_cast<time_t>(ns / 1000000000LL);
        if (out)
        {
            *out = t;
        }
        return t;
    }

} // extern "C"
