// Program threads that wait where the interposer cannot see.
//
// A thread that talks to the bridge (a lane) holds simulated time back at its clock for
// as long as the bridge believes it runs (thread_handoff.cc): it could still send work
// stamped with that clock.  The waits the interposer intercepts (condition variables,
// joins, sleeps, I/O) tell the bridge the thread blocks.  Some waits cannot be
// intercepted: libgomp's worker threads (PyTorch's intra-op pool, used by any CPU op on
// more than 32768 elements: `torch.zeros(65536)` before `.to("cuda")`) sleep on a futex
// issued by an inline `syscall` instruction.  Such a thread, announced at its creator's
// clock, never calls anything again; the bridge waited for it forever, so nothing after
// its birth became final and the rank's next synchronize never returned.
//
// The watch samples every watched thread every kSampleMs of real time.  A thread that is
// outside every hook and every intercepted wait, asleep in the kernel (state S or D in
// /proc/self/task/TID/stat) and has entered no hook since the previous sample, for
// kQuietSamples samples in a row, is parked: the bridge is told, on the thread's own
// lane, that it blocks with no deadline, as if it had called an intercepted wait.  When
// it next talks to the bridge it first says it resumes; like a thread woken from outside
// the simulation (an I/O wait), it resumes where simulated time is if that is later than
// its clock.  A thread that never talks again (an OpenMP worker) holds nothing back.
//
// The rank's first thread is not watched: it issues the GPU work, and its waits hold
// simulated time at its clock, as they always did (thread_handoff.cc).
//
// Handshake: each watched thread has a mode.  The thread moves Free -> Busy on entering
// a hook or an intercepted wait and back on leaving; the watch moves Free -> Parking,
// sends the block on the thread's lane (its socket is idle: the thread is Parking or
// Parked, so it cannot be sending), then Parking -> Parked.  A thread entering while
// Parking waits for Parked; entering while Parked, it sends the resume before anything else.
#pragma once

#include <atomic>
#include <cstdint>
#include <sys/types.h>

namespace phantora::interposer
{

class IdleThreadWatch
{
public:
    /// Real milliseconds between two samples of the watched threads.
    static constexpr int kSampleMs = 20;
    /// Samples in a row a thread must be found asleep and idle before it is parked:
    /// a thread briefly held on a lock is not parked.
    static constexpr int kQuietSamples = 5;

    /// Watches the calling thread, which has the lane \p lane (not the rank's first).
    static void Watch(uint32_t lane);
    /// The calling thread ends: it is no longer watched (call it while Busy).
    static void Unwatch();

    /// The calling thread enters a hook or an intercepted wait: a parked thread says it
    /// resumes first.  Nested entries count.
    static void Enter()
    {
        if (t_self)
        {
            (void)EnterSlow();
        }
    }
    /// The calling thread leaves what Enter entered.
    static void Leave()
    {
        if (t_self)
        {
            LeaveSlow();
        }
    }

    /// As Enter(), for a thread about to block again in a wait with no deadline for the
    /// bridge (thread_handoff.cc's timed condition-variable waits on a thread that is not
    /// the rank's first).  Returns true if the bridge still believes it blocks (it is
    /// parked, by the watch or by LeaveParked): then it says no Resume, and the caller
    /// sends no Block either.  Otherwise (false) it says Resume first if it must, as Enter().
    static bool EnterStillBlocked();
    /// Leaves the outermost entry, leaving the thread parked without a message: the bridge
    /// was told it blocks (a timed wait's Block) and is not told it resumes.  For a timed
    /// wait that timed out with no wake: the thread's next entry says Resume, or, if that
    /// entry is the next such wait, nothing at all.
    static void LeaveParked();
    /// Whether the calling thread is watched (a lane other than the rank's first).
    static bool Watched() { return t_self != nullptr; }
    /// Whether the calling thread is parked: the bridge believes it blocks.
    static bool Parked();

    /// Enter() ... Leave() as a scope.
    class Busy
    {
    public:
        Busy() { Enter(); }
        ~Busy() { Leave(); }
        Busy(const Busy&) = delete;
        Busy& operator=(const Busy&) = delete;
    };

    struct Thread;

private:
    /// Returns whether the thread was parked; says Resume for it if \p sayResume.
    static bool EnterSlow(bool sayResume = true);
    static void LeaveSlow();

    static thread_local Thread* t_self;
};

} // namespace phantora::interposer
