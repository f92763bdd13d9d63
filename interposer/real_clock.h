// The host's own clocks, for the interposer's internal use: the program's calls
// to clock_gettime are answered with simulated time, ours must never be.
#pragma once

#include <cstdint>
#include <ctime>

namespace phantora::interposer
{

int RealClockGettime(clockid_t id, timespec* ts);
int64_t RealNowNs(clockid_t id);
/// CPU time the calling thread has consumed.
inline int64_t ThreadCpuNs()
{
    return RealNowNs(CLOCK_THREAD_CPUTIME_ID);
}

} // namespace phantora::interposer
