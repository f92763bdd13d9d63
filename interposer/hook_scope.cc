#include "hook_scope.h"

#include <cstdlib>
#include <random>
#include <unistd.h>

namespace phantora::interposer
{

void HookScope::InjectJitter()
{
    static const long maxUs = []
    {
        const char* v = std::getenv("PHANTORA_JITTER_US");
        return v ? std::atol(v) : 0L;
    }();
    if (maxUs <= 0)
    {
        return;
    }
    thread_local std::minstd_rand rng(static_cast<unsigned>(getpid()) ^ std::random_device{}());
    // Sleeping costs no thread CPU time, so the rank's simulated clock does not see it.
    usleep(static_cast<useconds_t>(rng() % static_cast<unsigned long>(maxUs + 1)));
}

} // namespace phantora::interposer
