#include "real_clock.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace phantora::interposer
{

int RealClockGettime(clockid_t id, timespec* ts)
{
    // The raw system call cannot be interposed, so it is the real clock whatever
    // else is preloaded.
    return static_cast<int>(syscall(SYS_clock_gettime, id, ts));
}

int64_t RealNowNs(clockid_t id)
{
    timespec ts{};
    RealClockGettime(id, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

} // namespace phantora::interposer
