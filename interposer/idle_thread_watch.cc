#include "idle_thread_watch.h"

#include "internal_thread.h"
#include "never_destroyed.h"
#include "rank_client.h"
#include "sim_clock.h"

#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <poll.h>
#include <sched.h>
#include <string>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace phantora::interposer
{

struct IdleThreadWatch::Thread
{
    enum Mode : int
    {
        kFree,    ///< running outside hooks and intercepted waits
        kBusy,    ///< in a hook or an intercepted wait (the bridge knows where it is)
        kParking, ///< the watch is telling the bridge it blocks
        kParked,  ///< the bridge believes it blocks; it resumes on its next entry
        kGone,    ///< ended
    };
    std::atomic<int> mode{kFree};
    std::atomic<uint64_t> entries{0}; ///< entries and exits so far
    std::atomic<int64_t> clockNs{0};  ///< its clock when it last left a hook
    pid_t tid{0};
    uint32_t lane{0};
    int depth{0};            ///< the thread's own: nested entries
    uint64_t seenEntries{0}; ///< the watch's own: entries at the last sample
    int quiet{0};            ///< the watch's own: samples in a row found idle
};

thread_local IdleThreadWatch::Thread* IdleThreadWatch::t_self = nullptr;

namespace
{

struct Watched
{
    std::mutex mutex;
    std::vector<std::shared_ptr<IdleThreadWatch::Thread>> threads;
    bool started{false};
};

/// Never destroyed: threads end (and unwatch themselves) while the process exits.
constinit NeverDestroyed<Watched> g_watched;

/// Whether thread \p tid of this process sleeps in the kernel (S: interruptible,
/// D: uninterruptible), from /proc/self/task/TID/stat's third field.
bool Asleep(pid_t tid)
{
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
    {
        return false; // gone
    }
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0)
    {
        return false;
    }
    const std::string stat(buf, static_cast<std::size_t>(n));
    // "TID (comm) S ...": comm may hold spaces and parentheses, the last ')' ends it
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size())
    {
        return false;
    }
    const char state = stat[close + 2];
    return state == 'S' || state == 'D';
}

/// Whether \p fd is a pipe or a socket: what another process writes to.
bool PipeOrSocket(long fd)
{
    struct stat st; // filled by fstat where it succeeds
    return fd >= 0 && ::fstat(static_cast<int>(fd), &st) == 0 &&
           (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

/// Whether thread \p tid sleeps waiting for another process (/proc/self/task/TID/syscall:
/// the system call it is in and its arguments): reading a pipe or socket, polling only
/// pipes and sockets, or waiting for a child to exit.  A rank's thread that waits for
/// one of its helpers (Inductor's compile pool reads its workers' answers from a pipe) is
/// then parked as waiting outside the simulation: another process ends the wait, so a
/// rank whose every thread waits is not deadlocked while it does (bridge/engine/lanes.cc).
bool WaitsOnAnotherProcess(pid_t tid)
{
#if defined(__x86_64__)
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/syscall";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
    {
        return false;
    }
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0)
    {
        return false;
    }
    buf[n] = '\0';
    char* at = buf;
    const long nr = std::strtol(at, &at, 10);
    unsigned long args[2] = {};
    for (unsigned long& a : args)
    {
        a = std::strtoul(at, &at, 16);
    }
    switch (nr)
    {
    case 0:  // read
    case 19: // readv
    case 45: // recvfrom
    case 47: // recvmsg
        return PipeOrSocket(static_cast<long>(args[0]));
    case 7:   // poll
    case 271: // ppoll
    {
        // The thread is asleep in the call: its pollfd array stays as it passed it.
        const auto* fds = reinterpret_cast<const pollfd*>(args[0]);
        if (!fds || args[1] == 0 || args[1] > 64)
        {
            return false;
        }
        for (unsigned long i = 0; i < args[1]; ++i)
        {
            if (!PipeOrSocket(fds[i].fd))
            {
                return false;
            }
        }
        return true;
    }
    case 61:  // wait4
    case 247: // waitid
        return true;
    default:
        return false;
    }
#else
    (void)tid;
    return false;
#endif
}

/// One sample of \p t; parks it when it has been idle long enough.
void Sample(IdleThreadWatch::Thread& t, RankClient& client)
{
    using T = IdleThreadWatch::Thread;
    const uint64_t entries = t.entries.load(std::memory_order_acquire);
    if (t.mode.load(std::memory_order_acquire) != T::kFree || entries != t.seenEntries ||
        !Asleep(t.tid))
    {
        t.seenEntries = entries;
        t.quiet = 0;
        return;
    }
    if (++t.quiet < IdleThreadWatch::kQuietSamples)
    {
        return;
    }
    t.quiet = 0;
    int expected = T::kFree;
    if (!t.mode.compare_exchange_strong(expected, T::kParking, std::memory_order_acq_rel))
    {
        return;
    }
    if (t.entries.load(std::memory_order_acquire) != entries)
    {
        // it ran a hook between the sample and the claim: it is not idle
        t.mode.store(T::kFree, std::memory_order_release);
        return;
    }
    // The thread cannot touch its lane now (it waits for kParked to enter anything).
    const auto kind = WaitsOnAnotherProcess(t.tid) ? wire::HostEventKind::BlockOutside
                                                   : wire::HostEventKind::Block;
    client.PostAs(t.lane, t.clockNs.load(std::memory_order_relaxed),
                  wire::HostEvent{kind, 0, wire::kNoTime});
    t.mode.store(T::kParked, std::memory_order_release);
}

void* WatchLoop(void*)
{
    for (;;)
    {
        const timespec pause{0, IdleThreadWatch::kSampleMs * 1000000L};
        ::nanosleep(&pause, nullptr); // an interposer thread's sleep is real
        RankClient* client = RankClient::IfConnected();
        if (!client)
        {
            continue; // not connected yet, or the rank said goodbye
        }
        std::vector<std::shared_ptr<IdleThreadWatch::Thread>> threads;
        {
            std::lock_guard lock(g_watched->mutex);
            threads = g_watched->threads;
        }
        for (const auto& t : threads)
        {
            Sample(*t, *client);
        }
    }
    return nullptr;
}

} // namespace

void IdleThreadWatch::Watch(uint32_t lane)
{
    auto t = std::make_shared<Thread>();
    t->tid = ::gettid();
    t->lane = lane;
    t->clockNs.store(SimClock::Get().Now(), std::memory_order_relaxed);
    t_self = t.get();
    bool start = false;
    {
        std::lock_guard lock(g_watched->mutex);
        g_watched->threads.push_back(std::move(t));
        start = !g_watched->started;
        g_watched->started = true;
    }
    if (start)
    {
        StartInternalThread(WatchLoop, nullptr);
    }
}

void IdleThreadWatch::Unwatch()
{
    Thread* self = t_self;
    if (!self)
    {
        return;
    }
    self->mode.store(Thread::kGone, std::memory_order_release);
    t_self = nullptr;
    std::lock_guard lock(g_watched->mutex);
    auto& v = g_watched->threads;
    for (auto it = v.begin(); it != v.end(); ++it)
    {
        if (it->get() == self)
        {
            v.erase(it);
            break;
        }
    }
}

bool IdleThreadWatch::EnterSlow(bool sayResume)
{
    Thread& t = *t_self;
    if (t.depth++ > 0)
    {
        return false;
    }
    bool parked = false;
    for (;;)
    {
        int mode = Thread::kFree;
        if (t.mode.compare_exchange_strong(mode, Thread::kBusy, std::memory_order_acq_rel))
        {
            break;
        }
        if (mode == Thread::kParking)
        {
            sched_yield(); // the watch is telling the bridge; kParked comes next
            continue;
        }
        if (mode == Thread::kParked)
        {
            parked = true;
            t.mode.store(Thread::kBusy, std::memory_order_relaxed);
            if (sayResume)
            {
                if (RankClient* client = RankClient::IfConnected())
                {
                    client->Post(wire::HostEvent{wire::HostEventKind::Resume, 0, wire::kNoTime});
                }
            }
        }
        break;
    }
    t.entries.fetch_add(1, std::memory_order_release);
    return parked;
}

bool IdleThreadWatch::Parked()
{
    return t_self && t_self->mode.load(std::memory_order_acquire) == Thread::kParked;
}

bool IdleThreadWatch::EnterStillBlocked()
{
    if (!t_self)
    {
        return false;
    }
    if (t_self->depth > 0)
    {
        (void)EnterSlow(); // nested: the outermost entry already said Resume if needed
        return false;
    }
    return EnterSlow(false);
}

void IdleThreadWatch::LeaveParked()
{
    Thread& t = *t_self;
    if (--t.depth > 0)
    {
        Fatal("IdleThreadWatch::LeaveParked: not the outermost entry");
    }
    t.clockNs.store(SimClock::Get().Now(), std::memory_order_relaxed);
    t.entries.fetch_add(1, std::memory_order_release);
    // Only this thread leaves kParked (the watch moves Free -> Parking -> Parked only).
    t.mode.store(Thread::kParked, std::memory_order_release);
}

void IdleThreadWatch::LeaveSlow()
{
    Thread& t = *t_self;
    if (--t.depth > 0)
    {
        return;
    }
    t.clockNs.store(SimClock::Get().Now(), std::memory_order_relaxed);
    t.entries.fetch_add(1, std::memory_order_release);
    int busy = Thread::kBusy;
    t.mode.compare_exchange_strong(busy, Thread::kFree, std::memory_order_acq_rel);
}

} // namespace phantora::interposer
