// Brackets every intercepted call.  On entry the rank's clock is charged with the
// CPU time the program used since its last call (plus the scenario's per-call
// overhead); on exit the interposer's own CPU time is forgotten, so the cost of
// simulating does not leak into the simulated time.
#pragma once

#include "rank_client.h"
#include "sim_clock.h"

namespace phantora::interposer
{

class HookScope
{
public:
    HookScope()
    {
        if (t_depth++ == 0)
        {
            RankClient& client = RankClient::Get();
            SimClock& clock = SimClock::Get();
            clock.Charge();
            clock.Advance(client.Welcome().callOverheadNs);
            // after the charge: the interposer's own time, forgotten on exit
            InjectJitter();
        }
    }
    ~HookScope()
    {
        if (--t_depth == 0)
        {
            SimClock::Get().Rebase();
        }
    }
    HookScope(const HookScope&) = delete;
    HookScope& operator=(const HookScope&) = delete;

    RankClient& Client() const { return RankClient::Get(); }

    /// True while the calling thread is inside an intercepted call: what the
    /// interposer itself does then (locks, threads, waits) is not the program's.
    static bool Inside() { return t_depth > 0; }

private:
    /// PHANTORA_JITTER_US=N sleeps a random 0..N us of real time before each call, to
    /// show (in tests) that host timing cannot change the simulated timeline.
    static void InjectJitter();

    static thread_local int t_depth;
};

} // namespace phantora::interposer
