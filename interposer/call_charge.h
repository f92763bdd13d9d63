// The calling thread's place in an intercepted call: how deep it is (a hook that calls
// another entry point is still inside one call) and whether the call's runtime overhead is
// on the clock already.  HookScope opens and closes the call; RankClient charges a call
// that submits GPU work through it before stamping the work, so neither needs the other.
#pragma once

#include "sim_clock.h"

#include <cstdint>

namespace phantora::interposer
{

class CallCharge
{
public:
    /// Enters a (possibly nested) call; true for the outermost one, which starts uncharged.
    static bool Enter()
    {
        if (t_depth++ != 0)
        {
            return false;
        }
        t_charged = false;
        return true;
    }
    /// Leaves it; true when the outermost call ends.
    static bool Leave() { return --t_depth == 0; }

    /// True while the calling thread is inside an intercepted call.
    static bool Inside() { return t_depth > 0; }
    /// The call's overhead is on the clock already.
    static bool Charged() { return t_charged; }

    /// The current call submits GPU work: charges \p callOverheadNs once.
    static void SubmitsWork(int64_t callOverheadNs)
    {
        if (t_depth > 0 && !t_charged)
        {
            t_charged = true;
            SimClock::Get().Advance(callOverheadNs);
        }
    }

private:
    static thread_local int t_depth;
    static thread_local bool t_charged;
};

} // namespace phantora::interposer
