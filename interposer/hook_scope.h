// Brackets every intercepted call.  On entry the rank's clock is charged with the
// CPU time the program used since its last call; on exit the interposer's own CPU
// time is forgotten, so the cost of simulating does not leak into the simulated time.
// The real runtime's own host time for the call is charged as the scenario says: a
// call that submits GPU work costs `call_overhead` (microseconds: a launch), charged
// before the work is stamped with the rank's clock (SubmitsWork); any other call
// costs `query_overhead` (tens of nanoseconds: cudaGetDevice), charged on exit, unless
// a recorded host time stands for the gap the call sits in (host_time.h: the recording
// measured the real call's cost as part of the gap).
#pragma once

#include "call_charge.h"
#include "host_time.h"
#include "idle_thread_watch.h"
#include "rank_client.h"
#include "sim_clock.h"

namespace phantora::interposer
{

class HookScope
{
public:
    /// \p call: the hook, named if a process that is no rank connects in it (rank_client.h).
    explicit HookScope(const char* call = __builtin_FUNCTION())
    {
        if (CallCharge::Enter())
        {
            RankClient::Get(call); // connects on the first call
            SimClock::Get().Charge();
            IdleThreadWatch::Enter(); // a parked thread says it resumes before its call
            // after the charge: the interposer's own time, forgotten on exit
            InjectJitter();
        }
    }
    ~HookScope()
    {
        if (CallCharge::Leave())
        {
            if (!CallCharge::Charged() && HostTime::Get().ChargesCallCost())
            {
                SimClock::Get().Advance(RankClient::Get().Welcome().queryOverheadNs);
            }
            HostTime::Get().OnCallEnd();
            IdleThreadWatch::Leave();
            SimClock::Get().Rebase();
        }
    }
    HookScope(const HookScope&) = delete;
    HookScope& operator=(const HookScope&) = delete;

    RankClient& Client() const { return RankClient::Get(); }

    /// True while the calling thread is inside an intercepted call: what the
    /// interposer itself does then (locks, threads, waits) is not the program's.
    static bool Inside() { return CallCharge::Inside(); }

private:
    /// PHANTORA_JITTER_US=N sleeps a random 0..N us of real time before each call, to
    /// show (in tests) that host timing cannot change the simulated timeline.
    static void InjectJitter();
};

} // namespace phantora::interposer
