// Threads of one rank: how their simulated clocks relate, and what the bridge
// needs to know so that simulated time never stalls and never goes back.
//
// Each thread has its own clock (sim_clock.h).  Time passes from one thread to
// another where the program hands work over:
//   - pthread_create: the new thread starts at its creator's clock;
//   - pthread_cond_signal/broadcast -> pthread_cond_*wait: a woken thread resumes at
//     max(its clock, the signaller's clock at the signal);
//   - thread exit -> pthread_join: the joiner resumes at max(its clock, the exit);
//   - sleeps (nanosleep, clock_nanosleep, usleep, sleep) on a thread started after
//     the rank connected: the thread resumes at its clock plus the time asked for.
//     Sleeps of the rank's first thread (and of threads older than the connection)
//     cost no simulated time, as CPU-less waits never did: ranks typically sleep there
//     while waiting for each other at start-up (a file or a store with an NCCL id),
//     and counting that real waiting would make results depend on the host's speed;
//   - a poll of the rank's first thread on network sockets holds simulated time at its
//     clock for up to a second of real time (a store's reply), then lets it go: the
//     thread waits for another rank (an NCCL id in the TCPStore, set by a rank that may
//     itself wait for simulated time to pass), and resumes where simulated time is;
//   - a timed condition-variable, I/O (poll, epoll, select) or semaphore wait that times
//     out: on the first thread, the clock stays (and holds simulated time meanwhile); on
//     another thread, the timer fires where simulated time is (the bridge moves the
//     thread to the committed time), never at its clock plus the timeout: whether the
//     wait timed out or was woken first is decided by real time, so that clock would
//     make simulated time depend on the host's speed (IoWait says how it did).
//     Periodic timers (a watchdog's 100 ms wait, an interpreter lock's 5 ms wait)
//     thus neither run ahead of the ranks nor pace the simulation to real time.
//     Such a timeout with no wake leaves the thread blocked for the bridge (parked, as
//     idle_thread_watch.h does) until its next call, and a next timed wait with nothing
//     told in between sends nothing: an idle loop costs the bridge a few requests in all,
//     not two per timeout (CondWait, IoWait).
// Locks alone carry no time: a thread that finds its work already queued runs on
// its own clock.  Programs whose threads hand work over by waiting (as PyTorch's
// autograd engine and DDP's reducer do) therefore get the same simulated timeline
// whatever the host's speed; a thread that polls with real sleeps, or races others
// for a lock, sees time as a real one would: it depends on how fast it ran.
//
// The bridge only answers what no later request can change, so it must know the
// earliest instant each thread could still send something.  Every thread that
// talks to the bridge is a lane (rank_client.h), and tells it:
//   Born   (by the creator)  the new thread runs from the creator's clock;
//   Block  it waits in the host (condition variable, join, sleep): it holds nothing
//          back until woken, or until its deadline if the wait has one;
//   Wake   (by the waker)    a blocked thread will resume at the waker's clock: that
//          instant is held back until the woken thread says Resume;
//   Resume it runs again, taking up the wake it consumed;
//   Exit   it ended.
// Each of these is sent under one lock together with the bookkeeping it reports
// (who waits on which condition variable, which wakes are pending), and requests
// reach the bridge in the order they were sent (rank_client.h), so the bridge
// never sees a woken thread as neither pending nor running.
//
// A thread that waits where no hook sees it (libgomp's workers sleep on raw futexes)
// is parked by idle_thread_watch.h, which tells the bridge it blocks; it resumes on its
// next call.  A futex wait with an absolute deadline through syscall() (libstdc++'s
// std::future::wait_for) gets its deadline moved from the simulated clock to the host's.
//
// The interposer's own threads (ZeroMQ's, the host-function thread's waits inside
// intercepted calls) are not the program's and are left alone.
#include "hook_scope.h"
#include "idle_thread_watch.h"
#include "internal_thread.h"
#include "never_destroyed.h"
#include "rank_client.h"
#include "real_clock.h"
#include "real_function.h"
#include "sim_clock.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <ctime>
#include <deque>
#include <linux/futex.h>
#include <map>
#include <memory>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unordered_map>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using JoinFn = int (*)(pthread_t, void**);
using CondFn = int (*)(pthread_cond_t*);
using CondWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*);
using CondTimedWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*, const timespec*);
using CondClockWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);
using NanosleepFn = int (*)(const timespec*, timespec*);
using ClockNanosleepFn = int (*)(clockid_t, int, const timespec*, timespec*);
using UsleepFn = int (*)(useconds_t);
using PollFn = int (*)(pollfd*, nfds_t, int);
using PpollFn = int (*)(pollfd*, nfds_t, const timespec*, const sigset_t*);
using EpollWaitFn = int (*)(int, epoll_event*, int, int);
using EpollPwaitFn = int (*)(int, epoll_event*, int, int, const sigset_t*);
using SelectFn = int (*)(int, fd_set*, fd_set*, fd_set*, timeval*);
using SleepFn = unsigned (*)(unsigned);
using SyscallFn = long (*)(long, ...);
using SemTimedWaitFn = int (*)(sem_t*, const timespec*);
using SemClockWaitFn = int (*)(sem_t*, clockid_t, const timespec*);

// The versions glibc gives programs linked today (x86-64); the unversioned lookup
// can return a compatibility version with another ABI (pthread_cond_*).  Looked up
// on first use: another library's constructor may start a thread before ours ran.
#define PHANTORA_REAL(fn, type, name, version)                                                     \
    type fn()                                                                                      \
    {                                                                                              \
        static const type f = RealFunction<type>(name, version);                                   \
        return f;                                                                                  \
    }
PHANTORA_REAL(real_create, CreateFn, "pthread_create", "GLIBC_2.34")
PHANTORA_REAL(real_join, JoinFn, "pthread_join", "GLIBC_2.34")
PHANTORA_REAL(real_signal, CondFn, "pthread_cond_signal", "GLIBC_2.3.2")
PHANTORA_REAL(real_broadcast, CondFn, "pthread_cond_broadcast", "GLIBC_2.3.2")
PHANTORA_REAL(real_wait, CondWaitFn, "pthread_cond_wait", "GLIBC_2.3.2")
PHANTORA_REAL(real_timedwait, CondTimedWaitFn, "pthread_cond_timedwait", "GLIBC_2.3.2")
PHANTORA_REAL(real_clockwait, CondClockWaitFn, "pthread_cond_clockwait", nullptr)
PHANTORA_REAL(real_nanosleep, NanosleepFn, "nanosleep", nullptr)
PHANTORA_REAL(real_clock_nanosleep, ClockNanosleepFn, "clock_nanosleep", nullptr)
PHANTORA_REAL(real_usleep, UsleepFn, "usleep", nullptr)
PHANTORA_REAL(real_sleep, SleepFn, "sleep", nullptr)
PHANTORA_REAL(real_poll, PollFn, "poll", nullptr)
PHANTORA_REAL(real_ppoll, PpollFn, "ppoll", nullptr)
PHANTORA_REAL(real_epoll_wait, EpollWaitFn, "epoll_wait", nullptr)
PHANTORA_REAL(real_epoll_pwait, EpollPwaitFn, "epoll_pwait", nullptr)
PHANTORA_REAL(real_select, SelectFn, "select", nullptr)
PHANTORA_REAL(real_syscall, SyscallFn, "syscall", nullptr)
PHANTORA_REAL(real_sem_timedwait, SemTimedWaitFn, "sem_timedwait", nullptr)
PHANTORA_REAL(real_sem_clockwait, SemClockWaitFn, "sem_clockwait", nullptr)
#undef PHANTORA_REAL

/// Set for good in the interposer's own threads, and while a hook here runs.
thread_local int t_internal = 0;

struct CondState
{
    uint32_t waiters{0};       ///< blocked and not yet signalled
    std::deque<int64_t> wakes; ///< signals not yet taken up: the signaller's clock
};

struct ThreadState
{
    bool exited{false};
    int64_t finalNs{0};
    bool joinerBlocked{false}; ///< a tracked joiner told the bridge it blocks
    bool wakeGiven{false};     ///< the exit told the bridge about that joiner's wake
};

struct Registry
{
    /// Guards the bookkeeping below and orders the messages that report it.
    std::mutex mutex;
    std::unordered_map<const void*, CondState> conds;
    std::map<pthread_t, ThreadState> threads;
};

/// Never destroyed: threads (ZeroMQ's among them) are joined and woken while the
/// process exits, after static objects are gone.
constinit NeverDestroyed<Registry> g_registry;

Registry& Reg()
{
    return *g_registry;
}

/// Whether the calling thread's host waits concern the simulation.
RankClient* Tracked()
{
    if (t_internal > 0 || HookScope::Inside())
    {
        return nullptr;
    }
    return RankClient::IfConnected();
}

/// Brackets a hook: charges the thread's CPU time so far to its clock (a hand-over
/// shows the clock to another thread or the bridge: the gap's recorded host time is
/// charged, host_time.h), and keeps the interposer's own work (and anything it calls)
/// out of it.
class Internal
{
public:
    Internal()
    {
        SimClock::Get().Charge();
        SimClock::Get().Expose();
        ++t_internal;
        IdleThreadWatch::Enter(); // a parked thread says it resumes before anything else
    }
    /// For a wait that blocks for the bridge with no deadline: \p stillBlocked says whether
    /// the thread was parked, in which case it says no Resume
    /// (IdleThreadWatch::EnterStillBlocked).
    explicit Internal(bool* stillBlocked)
    {
        SimClock::Get().Charge();
        SimClock::Get().Expose();
        ++t_internal;
        *stillBlocked = IdleThreadWatch::EnterStillBlocked();
    }
    ~Internal()
    {
        IdleThreadWatch::Leave();
        --t_internal;
        SimClock::Get().Rebase();
    }
    Internal(const Internal&) = delete;
    Internal& operator=(const Internal&) = delete;
};

void Tell(RankClient& client, wire::HostEventKind kind, int64_t atNs = wire::kNoTime,
          uint32_t lane = 0)
{
    client.Post(wire::HostEvent{kind, lane, atNs});
}

struct StartArgs
{
    void* (*start)(void*){nullptr};
    void* arg{nullptr};
    int64_t parentNs{0};
    bool internal{false};
    bool hasLane{false};
    uint32_t lane{0};
};

/// Runs when a program thread ends (also through pthread_exit): its joiner, if
/// blocked, is woken at its clock, and the bridge forgets it.
struct ThreadEnd
{
    bool armed{false};
    ~ThreadEnd()
    {
        if (!armed)
        {
            return;
        }
        Internal in; // a parked thread resumes first: its exit comes after
        IdleThreadWatch::Unwatch();
        const int64_t now = SimClock::Get().Now();
        RankClient* client = RankClient::IfConnected();
        std::lock_guard lock(Reg().mutex);
        ThreadState& t = Reg().threads[pthread_self()];
        t.exited = true;
        t.finalNs = now;
        if (!client || !RankClient::HasLane())
        {
            return;
        }
        if (t.joinerBlocked)
        {
            Tell(*client, wire::HostEventKind::Wake);
            t.wakeGiven = true;
        }
        Tell(*client, wire::HostEventKind::Exit, wire::kNoTime, client->ThisLaneId());
        client->CloseLane();
    }
};

thread_local ThreadEnd t_end;

void* Trampoline(void* p)
{
    std::unique_ptr<StartArgs> args(static_cast<StartArgs*>(p));
    if (args->internal)
    {
        t_internal = 1;
        return args->start(args->arg);
    }
    SimClock::Get().AdvanceTo(args->parentNs);
    if (args->hasLane)
    {
        RankClient::AdoptLane(args->lane);
        IdleThreadWatch::Watch(args->lane);
    }
    t_end.armed = true;
    SimClock::Get().Rebase();
    return args->start(args->arg);
}

/// Simulated nanoseconds from now until \p abs on \p clock (0 if past).
int64_t SimRemainingNs(clockid_t clock, const timespec& abs)
{
    timespec now{};
    clock_gettime(clock, &now); // the simulated clock the program computed abs from
    const int64_t d = (abs.tv_sec - now.tv_sec) * 1000000000LL + (abs.tv_nsec - now.tv_nsec);
    return d > 0 ? d : 0;
}

timespec RealDeadline(clockid_t clock, int64_t afterNs)
{
    timespec now{};
    RealClockGettime(clock, &now);
    const int64_t t = now.tv_sec * 1000000000LL + now.tv_nsec + afterNs;
    return timespec{static_cast<time_t>(t / 1000000000LL), static_cast<long>(t % 1000000000LL)};
}

/// pthread_cond_timedwait does not say which clock the condition variable uses; the
/// deadline's magnitude does (wall-clock epochs are decades, monotonic ones are far
/// smaller).
clockid_t GuessClock(const timespec& abs)
{
    return abs.tv_sec > 1000000000 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
}

/// Whether host waits of the calling thread take simulated time (see the top).
bool TimePasses()
{
    return RankClient::IfConnected() && RankClient::HasLane() && !RankClient::IsFirstLane();
}

/// A condition-variable wait: \p wait blocks for real (given the real deadline, if any).
///
/// A timed wait that times out with no wake, on a thread other than the rank's first, says
/// no Resume: the thread stays parked (idle_thread_watch.h), blocked for the bridge, until
/// it next enters the interposer.  If that is the next such wait (a watchdog's or an
/// interpreter's timed wait in a loop: nothing the bridge sees happened between the
/// two), it says no Block either, and the run of timeouts costs the bridge nothing; any
/// other call says Resume first, and the thread resumes where simulated time is then, as a
/// parked one does.  What changes for the bridge: the thread no longer runs (holding
/// simulated time at its clock) between two timeouts, during which it sent nothing, and
/// it is lifted to committed time once, at its next call, rather than at each timeout.
/// A wake it takes up is stamped no earlier than committed time at the Wake, which is
/// no earlier than any lift it skipped, so its clock after a wake is unchanged.  Each
/// timeout cost a Block and a Resume, paced by real time: 15 NCCL watchdogs (100 ms waits)
/// and a few interpreter threads (5 ms waits) per Megatron rank outran the bridge's one
/// thread at 48 ranks (README).
template <class Wait>
int CondWait(pthread_cond_t* cond, const timespec* abs, clockid_t clock, Wait wait)
{
    RankClient* client = Tracked();
    if (!client)
    {
        return wait(abs);
    }
    int64_t deadline = wire::kNoTime;
    timespec realAbs{};
    {
        bool stillBlocked = false;
        Internal in(&stillBlocked);
        if (abs)
        {
            const int64_t d = SimRemainingNs(clock, *abs);
            // The rank's first thread keeps its clock and holds time there, as it always
            // did; another thread's timer fires wherever simulated time then is.
            if (!TimePasses())
            {
                deadline = SimClock::Get().Now();
            }
            realAbs = RealDeadline(clock, d);
        }
        std::lock_guard lock(Reg().mutex);
        ++Reg().conds[cond].waiters;
        if (stillBlocked && deadline != wire::kNoTime)
        {
            // not expected (parked threads are never the first): block with the deadline
            Tell(*client, wire::HostEventKind::Resume);
            stillBlocked = false;
        }
        if (!stillBlocked)
        {
            Tell(*client, wire::HostEventKind::Block, deadline);
        }
        IdleThreadWatch::Enter(); // held through the wait: the bridge knows it blocks
    }
    const int rc = wait(abs ? &realAbs : nullptr);
    bool park = false;
    {
        Internal in;
        std::lock_guard lock(Reg().mutex);
        CondState& c = Reg().conds[cond];
        int64_t stamp = wire::kNoTime;
        if (!c.wakes.empty())
        {
            stamp = c.wakes.front();
            c.wakes.pop_front();
            SimClock::Get().AdvanceTo(stamp);
        }
        else
        {
            if (c.waiters > 0)
            {
                --c.waiters;
            }
        }
        if (c.waiters == 0 && c.wakes.empty())
        {
            Reg().conds.erase(cond);
        }
        park = abs && rc == ETIMEDOUT && stamp == wire::kNoTime && deadline == wire::kNoTime &&
               IdleThreadWatch::Watched();
        if (!park)
        {
            Tell(*client, wire::HostEventKind::Resume, stamp);
        }
    }
    if (park)
    {
        IdleThreadWatch::LeaveParked(); // blocked for the bridge until its next call
    }
    else
    {
        IdleThreadWatch::Leave();
    }
    return rc;
}

/// Whether \p cond has a waiter the interposer knows of.
bool HasWaiters(pthread_cond_t* cond)
{
    std::lock_guard lock(Reg().mutex);
    auto it = Reg().conds.find(cond);
    return it != Reg().conds.end() && it->second.waiters > 0;
}

/// Wakes up to \p most waiters of \p cond at the caller's clock.
void GiveWakes(pthread_cond_t* cond, uint32_t most)
{
    RankClient* client = Tracked();
    if (!client)
    {
        return;
    }
    if (IdleThreadWatch::Parked() && !HasWaiters(cond))
    {
        // Wakes nobody: a parked thread (an idle loop between two timed waits, gloo's
        // notify_all before each epoll_wait) stays parked rather than saying Resume.
        return;
    }
    Internal in;
    std::lock_guard lock(Reg().mutex);
    auto it = Reg().conds.find(cond);
    if (it == Reg().conds.end())
    {
        return;
    }
    const int64_t now = SimClock::Get().Now();
    for (uint32_t i = 0; i < most && it->second.waiters > 0; ++i)
    {
        --it->second.waiters;
        it->second.wakes.push_back(now);
        Tell(*client, wire::HostEventKind::Wake);
    }
}

/// A sleep of \p ns simulated nanoseconds; \p sleep sleeps for real.
template <class Sleep> auto SleepFor(int64_t ns, Sleep sleep)
{
    RankClient* client = Tracked();
    if (!client || !TimePasses())
    {
        return sleep();
    }
    int64_t deadline = 0;
    {
        Internal in;
        deadline = SimClock::Get().Now() + ns;
        std::lock_guard lock(Reg().mutex);
        Tell(*client, wire::HostEventKind::Block, deadline);
        IdleThreadWatch::Enter(); // held through the wait: the bridge knows it blocks
    }
    auto rc = sleep();
    Internal in;
    SimClock::Get().AdvanceTo(deadline);
    std::lock_guard lock(Reg().mutex);
    Tell(*client, wire::HostEventKind::Resume);
    IdleThreadWatch::Leave();
    return rc;
}

/// A thread waiting for file descriptors (an I/O thread in poll or epoll_wait: a
/// store server, an event loop) or in a semaphore with a deadline is blocked in the host
/// like one in a condition variable: what wakes it comes from outside the simulation, so
/// it resumes where simulated time is if that is later than its clock.  \p timeoutNs < 0:
/// none.  The rank's first thread keeps its clock and holds time back while it waits, as
/// it always did.
///
/// A timeout fires wherever simulated time is, as a timed condition-variable wait's does
/// (CondWait): the wait blocks with no deadline, and a timeout neither moves the thread's
/// clock by the time asked for nor holds simulated time back until then.  Whether such a
/// wait ends by a wake or by its timeout is decided by real time (the host's speed), so a
/// clock moved by the timeout made simulated time depend on it: TorchTitan's tqdm monitor
/// thread (threading.Event.wait(10) in sem_clockwait) moved its clock 10 s at each 10 s of
/// real time, and took the GIL from the main thread at that clock, which the main
/// thread's GIL wait then took up: Llama3-8B's step 2 took 9.1 s of simulated time on one
/// run and 1.1 s on another (examples/torchtitan/README.md).  A wait on no descriptors
/// can only time out: it is a sleep (SleepFor).
///
/// A timeout with no wake leaves the thread parked (no Resume), and its next such wait
/// with nothing entered in between (gloo's event loop: epoll_wait for 10 ms, over and
/// over, 2 or 3 per Megatron rank) sends nothing (CondWait says why that is safe): a run
/// of timeouts costs the bridge one Block in all.
template <class Wait, class TimedOut> int IoWait(int64_t timeoutNs, Wait wait, TimedOut timedOut)
{
    RankClient* client = Tracked();
    if (!client || !TimePasses())
    {
        return wait();
    }
    {
        bool stillBlocked = false;
        Internal in(&stillBlocked);
        std::lock_guard lock(Reg().mutex);
        if (!stillBlocked)
        {
            Tell(*client, wire::HostEventKind::Block);
        }
        IdleThreadWatch::Enter(); // held through the wait: the bridge knows it blocks
    }
    const int rc = wait();
    // The caller reads errno after a -1 (an event loop retries on EINTR and fails on
    // anything else): the bookkeeping below makes system calls of its own.
    const int waitErrno = errno;
    const bool park = timeoutNs >= 0 && timedOut(rc, waitErrno) && IdleThreadWatch::Watched();
    {
        Internal in;
        if (!park)
        {
            std::lock_guard lock(Reg().mutex);
            Tell(*client, wire::HostEventKind::Resume);
        }
    }
    if (park)
    {
        IdleThreadWatch::LeaveParked(); // blocked for the bridge until its next call
    }
    else
    {
        IdleThreadWatch::Leave();
    }
    errno = waitErrno;
    return rc;
}

/// How long (real time) a rank's first thread may wait on network sockets while holding
/// simulated time at its clock.  Short waits (a store reply from its own server thread)
/// keep holding, as they always did, so they cost no simulated time and change nothing.
/// A longer one waits for another rank (PyTorch creating an NCCL communicator at its
/// first collective passes the NCCL id through the TCPStore: the ranks wait for the id's
/// creator, which may itself wait for a collective only they let simulated time finish).
constexpr int kFirstThreadHoldMs = 1000;

/// Whether every descriptor polled is an IP socket (a TCPStore's, not a pipe to a data
/// loader's worker process or an event fd).
bool AllNetworkSockets(const pollfd* fds, nfds_t n)
{
    if (n == 0)
    {
        return false;
    }
    for (nfds_t i = 0; i < n; ++i)
    {
        sockaddr_storage addr{};
        socklen_t len = sizeof addr;
        if (fds[i].fd < 0 ||
            getsockname(fds[i].fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
            (addr.ss_family != AF_INET && addr.ss_family != AF_INET6))
        {
            return false;
        }
    }
    return true;
}

int64_t RealNowMs()
{
    timespec now{};
    RealClockGettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000LL + now.tv_nsec / 1000000;
}

/// poll() of the rank's first thread on network sockets (see kFirstThreadHoldMs): after
/// that long without an answer it tells the bridge it waits for another process
/// (BlockOutside), so simulated time can move on without it, and it resumes where
/// simulated time then is.  \p timeoutMs < 0: none.
int FirstThreadSocketPoll(RankClient& client, pollfd* fds, nfds_t n, int timeoutMs)
{
    if (timeoutMs >= 0 && timeoutMs <= kFirstThreadHoldMs)
    {
        return real_poll()(fds, n, timeoutMs);
    }
    const int64_t start = RealNowMs();
    const int rc = real_poll()(fds, n, kFirstThreadHoldMs);
    if (rc != 0)
    {
        return rc;
    }
    int remaining = -1;
    if (timeoutMs >= 0)
    {
        remaining = static_cast<int>(std::max<int64_t>(0, timeoutMs - (RealNowMs() - start)));
    }
    {
        Internal in;
        std::lock_guard lock(Reg().mutex);
        Tell(client, wire::HostEventKind::BlockOutside);
        IdleThreadWatch::Enter(); // held through the wait: the bridge knows it blocks
    }
    const int result = real_poll()(fds, n, remaining);
    const int waitErrno = errno;
    {
        Internal in;
        std::lock_guard lock(Reg().mutex);
        Tell(client, wire::HostEventKind::Resume);
        IdleThreadWatch::Leave();
    }
    errno = waitErrno;
    return result;
}

bool SimulatedClock(clockid_t id)
{
    return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW ||
           id == CLOCK_REALTIME_COARSE || id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}

/// poll, epoll and select say 0 when the timeout passed.
template <class Wait> int IoWait(int64_t timeoutNs, Wait wait)
{
    return IoWait(timeoutNs, wait, [](int rc, int) { return rc == 0; });
}

/// A semaphore wait with a deadline (CPython's timed lock acquire, under
/// threading.Event.wait(t) and queue.get(timeout=t)): the program computed the deadline
/// from the simulated clock, so it moves to the host's (else it has long passed there
/// and the wait returns at once: a thread that waits in a loop would spin and hold
/// simulated time back), and a thread other than the rank's first waits as in an I/O
/// wait.  \p wait waits for real until the deadline it is given.
template <class Wait> int SemDeadlineWait(clockid_t clock, const timespec* abs, Wait wait)
{
    if (!abs || t_internal > 0 || HookScope::Inside() || !RankClient::Configured() ||
        !SimulatedClock(clock))
    {
        return wait(abs);
    }
    int64_t remaining = 0;
    timespec real{};
    {
        Internal in;
        remaining = SimRemainingNs(clock, *abs);
        real = RealDeadline(clock, remaining);
    }
    return IoWait(
        remaining, [&] { return wait(&real); },
        [](int rc, int error) { return rc == -1 && error == ETIMEDOUT; });
}

int64_t MsTimeout(int ms)
{
    return ms < 0 ? -1 : int64_t{ms} * 1000000;
}

} // namespace

namespace phantora::interposer
{

void StartInternalThread(void* (*start)(void*), void* arg)
{
    auto args = std::make_unique<StartArgs>();
    args->start = start;
    args->arg = arg;
    args->internal = true;
    pthread_t t{};
    if (real_create()(&t, nullptr, Trampoline, args.get()) != 0)
    {
        Fatal("cannot start an interposer thread");
    }
    args.release(); // the thread owns it now
    pthread_detach(t);
}

} // namespace phantora::interposer

extern "C"
{

    int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                       void* arg)
    {
        auto args = std::make_unique<StartArgs>();
        args->start = start;
        args->arg = arg;
        args->internal = t_internal > 0 || HookScope::Inside();
        RankClient* client = Tracked();
        std::unique_ptr<Internal> in;
        if (!args->internal)
        {
            in = std::make_unique<Internal>();
            args->parentNs = SimClock::Get().Now();
        }
        if (client)
        {
            // The bridge hears of the thread before it can send anything itself.
            std::lock_guard lock(Reg().mutex);
            args->hasLane = true;
            args->lane = client->ReserveLane();
            Tell(*client, wire::HostEventKind::Born, wire::kNoTime, args->lane);
        }
        StartArgs* raw = args.get();
        const int rc = real_create()(thread, attr, Trampoline, raw);
        if (rc != 0)
        {
            if (client)
            {
                std::lock_guard lock(Reg().mutex);
                Tell(*client, wire::HostEventKind::Exit, wire::kNoTime, raw->lane);
            }
            return rc;
        }
        args.release(); // the thread owns it now
        if (!raw->internal)
        {
            std::lock_guard lock(Reg().mutex);
            Reg().threads.try_emplace(*thread);
        }
        return rc;
    }

    int pthread_join(pthread_t thread, void** ret)
    {
        RankClient* client = Tracked();
        if (!client)
        {
            const int rc = real_join()(thread, ret);
            if (rc == 0 && t_internal == 0)
            {
                std::lock_guard lock(Reg().mutex);
                auto it = Reg().threads.find(thread);
                if (it != Reg().threads.end())
                {
                    SimClock::Get().AdvanceTo(it->second.finalNs);
                    Reg().threads.erase(it);
                }
            }
            return rc;
        }
        bool blocked = false;
        {
            Internal in;
            std::lock_guard lock(Reg().mutex);
            ThreadState& t = Reg().threads[thread];
            if (!t.exited)
            {
                t.joinerBlocked = true;
                blocked = true;
                Tell(*client, wire::HostEventKind::Block);
                IdleThreadWatch::Enter(); // held through the join: the bridge knows it blocks
            }
        }
        const int rc = real_join()(thread, ret);
        Internal in;
        std::lock_guard lock(Reg().mutex);
        auto it = Reg().threads.find(thread);
        int64_t stamp = wire::kNoTime;
        if (it != Reg().threads.end())
        {
            SimClock::Get().AdvanceTo(it->second.finalNs);
            if (it->second.wakeGiven)
            {
                stamp = it->second.finalNs;
            }
            Reg().threads.erase(it);
        }
        if (blocked)
        {
            Tell(*client, wire::HostEventKind::Resume, stamp);
            IdleThreadWatch::Leave();
        }
        return rc;
    }

    int pthread_cond_signal(pthread_cond_t* cond)
    {
        GiveWakes(cond, 1);
        return real_signal()(cond);
    }

    int pthread_cond_broadcast(pthread_cond_t* cond)
    {
        GiveWakes(cond, UINT32_MAX);
        return real_broadcast()(cond);
    }

    int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex)
    {
        return CondWait(cond, nullptr, CLOCK_REALTIME,
                        [&](const timespec*) { return real_wait()(cond, mutex); });
    }

    int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const timespec* abs)
    {
        if (!abs)
        {
            return EINVAL;
        }
        return CondWait(cond, abs, GuessClock(*abs),
                        [&](const timespec* t) { return real_timedwait()(cond, mutex, t); });
    }

    int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                               const timespec* abs)
    {
        if (!abs)
        {
            return EINVAL;
        }
        if (!SimulatedClock(clock))
        {
            return real_clockwait()(cond, mutex, clock, abs);
        }
        return CondWait(cond, abs, clock,
                        [&](const timespec* t) { return real_clockwait()(cond, mutex, clock, t); });
    }

    int nanosleep(const timespec* req, timespec* rem)
    {
        if (!req || req->tv_sec < 0 || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L)
        {
            return real_nanosleep()(req, rem);
        }
        return SleepFor(req->tv_sec * 1000000000LL + req->tv_nsec,
                        [&] { return real_nanosleep()(req, rem); });
    }

    int clock_nanosleep(clockid_t clock, int flags, const timespec* req, timespec* rem)
    {
        if (!req || !SimulatedClock(clock) || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L)
        {
            return real_clock_nanosleep()(clock, flags, req, rem);
        }
        if (flags & TIMER_ABSTIME)
        {
            // The deadline is on the simulated clock the program read.
            const int64_t d = SimRemainingNs(clock, *req);
            const timespec rel{static_cast<time_t>(d / 1000000000LL),
                               static_cast<long>(d % 1000000000LL)};
            return SleepFor(d, [&] { return real_clock_nanosleep()(clock, 0, &rel, nullptr); });
        }
        return SleepFor(req->tv_sec * 1000000000LL + req->tv_nsec,
                        [&] { return real_clock_nanosleep()(clock, flags, req, rem); });
    }

    int usleep(useconds_t us)
    {
        return SleepFor(static_cast<int64_t>(us) * 1000, [&] { return real_usleep()(us); });
    }

    int poll(pollfd* fds, nfds_t n, int timeoutMs)
    {
        if (timeoutMs == 0)
        {
            return real_poll()(fds, n, 0);
        }
        RankClient* client = Tracked();
        if (client && RankClient::HasLane() && RankClient::IsFirstLane() &&
            AllNetworkSockets(fds, n))
        {
            return FirstThreadSocketPoll(*client, fds, n, timeoutMs);
        }
        if (n == 0 && timeoutMs > 0)
        {
            return SleepFor(MsTimeout(timeoutMs), [&] { return real_poll()(fds, n, timeoutMs); });
        }
        return IoWait(MsTimeout(timeoutMs), [&] { return real_poll()(fds, n, timeoutMs); });
    }

    int ppoll(pollfd* fds, nfds_t n, const timespec* timeout, const sigset_t* mask)
    {
        if (timeout && timeout->tv_sec == 0 && timeout->tv_nsec == 0)
        {
            return real_ppoll()(fds, n, timeout, mask);
        }
        if (n == 0 && timeout)
        {
            return SleepFor(timeout->tv_sec * 1000000000LL + timeout->tv_nsec,
                            [&] { return real_ppoll()(fds, n, timeout, mask); });
        }
        return IoWait(timeout ? timeout->tv_sec * 1000000000LL + timeout->tv_nsec : -1,
                      [&] { return real_ppoll()(fds, n, timeout, mask); });
    }

    int epoll_wait(int epfd, epoll_event* events, int max, int timeoutMs)
    {
        if (timeoutMs == 0)
        {
            return real_epoll_wait()(epfd, events, max, 0);
        }
        return IoWait(MsTimeout(timeoutMs),
                      [&] { return real_epoll_wait()(epfd, events, max, timeoutMs); });
    }

    int epoll_pwait(int epfd, epoll_event* events, int max, int timeoutMs, const sigset_t* mask)
    {
        if (timeoutMs == 0)
        {
            return real_epoll_pwait()(epfd, events, max, 0, mask);
        }
        return IoWait(MsTimeout(timeoutMs),
                      [&] { return real_epoll_pwait()(epfd, events, max, timeoutMs, mask); });
    }

    int select(int n, fd_set* r, fd_set* w, fd_set* e, timeval* timeout)
    {
        if (timeout && timeout->tv_sec == 0 && timeout->tv_usec == 0)
        {
            return real_select()(n, r, w, e, timeout);
        }
        if (n == 0 && timeout)
        {
            // select(0, ..., &t): a sleep (what Python 2's time.sleep did)
            return SleepFor(timeout->tv_sec * 1000000000LL + timeout->tv_usec * 1000LL,
                            [&] { return real_select()(n, r, w, e, timeout); });
        }
        return IoWait(timeout ? timeout->tv_sec * 1000000000LL + timeout->tv_usec * 1000LL : -1,
                      [&] { return real_select()(n, r, w, e, timeout); });
    }

    unsigned sleep(unsigned seconds)
    {
        return SleepFor(static_cast<int64_t>(seconds) * 1000000000LL,
                        [&] { return real_sleep()(seconds); });
    }

    // A futex wait with an absolute deadline (FUTEX_WAIT_BITSET: libstdc++'s
    // std::future::wait_for and std::atomic waits) takes the deadline on the clock the
    // program read, which is simulated; the kernel reads it on the host's.  Simulated
    // monotonic time is far behind the host's, so such a wait timed out at once: PyTorch's
    // ProcessGroupNCCL destructor then found its 10-minute abort future "timed out" and
    // threw c10::DistBackendError (a script that exits without destroy_process_group).
    // The deadline is moved to the host's clock, the same time away as on the simulated one,
    // as timed condition-variable waits are (CondWait).  Every other call passes through.
    int sem_timedwait(sem_t* sem, const timespec* abs)
    {
        return SemDeadlineWait(CLOCK_REALTIME, abs,
                               [&](const timespec* t) { return real_sem_timedwait()(sem, t); });
    }

    int sem_clockwait(sem_t* sem, clockid_t clock, const timespec* abs)
    {
        return SemDeadlineWait(
            clock, abs, [&](const timespec* t) { return real_sem_clockwait()(sem, clock, t); });
    }

    long syscall(long number, ...)
    {
        va_list ap;
        va_start(ap, number);
        long a[6];
        for (long& x : a)
        {
            x = va_arg(ap, long);
        }
        va_end(ap);
        if (number == SYS_futex && a[3] != 0 && t_internal == 0 && !HookScope::Inside() &&
            RankClient::Configured())
        {
            const int op = static_cast<int>(a[1]);
            const int cmd = op & FUTEX_CMD_MASK;
            if (cmd == FUTEX_WAIT_BITSET)
            {
                const clockid_t clock =
                    (op & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
                const auto* abs = reinterpret_cast<const timespec*>(a[3]);
                timespec real{};
                {
                    Internal in;
                    real = RealDeadline(clock, SimRemainingNs(clock, *abs));
                }
                return real_syscall()(number, a[0], a[1], a[2], reinterpret_cast<long>(&real), a[4],
                                      a[5]);
            }
        }
        return real_syscall()(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    }

} // extern "C"
