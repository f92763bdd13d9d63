// A rank that uses CUDA and NCCL from three threads, the way PyTorch does:
//   - the main thread runs the forward kernel, hands the step to a worker through a
//     condition variable and waits for it (autograd's caller waiting on its engine);
//   - the worker launches the backward kernel and the all-reduce on the same stream,
//     records an event, and signals the main thread (autograd's device thread, DDP);
//   - a poller checks the latest event with cudaEventQuery in a loop with real sleeps
//     until the last step's event is done (ProcessGroupNCCL's watchdog);
//   - a watchdog does the same with timed condition-variable waits (wait_for), as
//     ProcessGroupNCCL's does;
//   - an I/O thread that never touches CUDA waits in poll() on a pipe until the end
//     (a store server or event loop): it must not hold simulated time back.
// "single" does the same work on the main thread alone: its step times are what the
// threaded run must reproduce.  "eintr": a thread's poll, epoll_wait and select,
// interrupted by a signal, return -1 with errno EINTR (an event loop such as gloo's
// retries on EINTR and aborts on anything else), as they do without the interposer.
// "idle": the "single" work, with the main thread also spending 300 ms of real time in
// sleeps (which cost it no simulated time) while two idle threads wait in loops: one in
// timed condition-variable waits of 1 ms (a watchdog with no work), one in epoll_wait
// of 1 ms after a notify_all that wakes nobody (gloo's event loop); each counts its
// timeouts.
// "timer": the "single" work, with the main thread also spending 300 ms of real time in
// sleeps while a helper thread waits in a loop with 20 ms timeouts that expire in real
// time (sem_timedwait, as CPython's threading.Event.wait under tqdm's monitor thread, poll
// on a pipe nobody writes, a condition variable nobody notifies), and after each timeout hands a
// token to whoever waits for it (CPython's GIL: a condition variable); after each sleep the main
// thread waits for the next token in 5 ms timed waits (CPython's take_gil).  Its step times must
// stay those of "single": a timeout that expires in real time moves no simulated clock.
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <mutex>
#include <nccl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <string>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

__global__ void thread_fwd(float* x)
{
    x[threadIdx.x] += 1.0f;
}

__global__ void thread_bwd(float* x)
{
    x[threadIdx.x] *= 2.0f;
}

namespace
{

constexpr int kSteps = 4;
constexpr size_t kFloats = (4 << 20) / 4;

double NowUs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

void Check(bool ok, const char* what)
{
    if (!ok)
    {
        std::fprintf(stderr, "failed: %s\n", what);
        std::exit(1);
    }
}

struct Shared
{
    std::mutex m;
    std::condition_variable workReady;
    std::condition_variable workDone;
    int stepToRun{-1}; ///< the step the worker should run next
    int stepFinished{-1};
    cudaEvent_t latest{nullptr}; ///< the event of the last step the worker finished
    int latestStep{-1};
    bool stop{false};
};

float* g_buf = nullptr;
cudaStream_t g_stream = nullptr;
ncclComm_t g_comm = nullptr;
cudaEvent_t g_events[kSteps];

/// The second half of a step: what the worker (or, in "single", the main thread) does.
void Backward(int step)
{
    thread_bwd<<<1, 32, 0, g_stream>>>(g_buf);
    Check(ncclAllReduce(g_buf, g_buf, kFloats, ncclFloat, ncclSum, g_comm, g_stream) == ncclSuccess,
          "all-reduce");
    Check(cudaEventRecord(g_events[step], g_stream) == cudaSuccess, "event record");
}

void Worker(Shared* s, int device)
{
    cudaSetDevice(device);
    for (;;)
    {
        int step = 0;
        {
            std::unique_lock lock(s->m);
            s->workReady.wait(lock, [&] { return s->stepToRun > s->stepFinished || s->stop; });
            if (s->stop)
            {
                return;
            }
            step = s->stepToRun;
        }
        Backward(step);
        {
            std::lock_guard lock(s->m);
            s->stepFinished = step;
            s->latest = g_events[step];
            s->latestStep = step;
        }
        s->workDone.notify_one();
    }
}

void Poller(Shared* s, int device)
{
    cudaSetDevice(device);
    for (;;)
    {
        cudaEvent_t e = nullptr;
        int step = -1;
        {
            std::lock_guard lock(s->m);
            e = s->latest;
            step = s->latestStep;
        }
        if (e && cudaEventQuery(e) == cudaSuccess && step == kSteps - 1)
        {
            return;
        }
        usleep(300);
    }
}

void Watchdog(Shared* s, int device)
{
    cudaSetDevice(device);
    std::condition_variable never;
    std::unique_lock lock(s->m);
    for (;;)
    {
        never.wait_for(lock, std::chrono::milliseconds(2));
        if (s->latest && s->latestStep == kSteps - 1)
        {
            cudaEvent_t e = s->latest;
            lock.unlock();
            const bool done = cudaEventQuery(e) == cudaSuccess;
            lock.lock();
            if (done)
            {
                return;
            }
        }
    }
}

void Io(int fd)
{
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, -1) != 1)
    {
    }
}

/// A watchdog with no work: 1 ms timed waits until told to stop.  Returns how many it
/// waited (nobody notifies: each ends by timing out; wait_for's cv_status compares the
/// thread's simulated clock, which an idle thread's timeouts do not move, so it is not
/// counted).
int IdleWaiter(Shared* s)
{
    int timeouts = 0;
    std::condition_variable never;
    std::unique_lock lock(s->m);
    while (!s->stop)
    {
        never.wait_for(lock, std::chrono::milliseconds(1));
        ++timeouts;
    }
    return timeouts;
}

/// gloo's event loop with nothing to do: wakes whoever waits for a loop tick (nobody),
/// then epoll_wait for 1 ms on a pipe nobody writes.  Returns its timeouts.
int IdleLoop(std::atomic<bool>* stop)
{
    int fds[2] = {-1, -1};
    Check(pipe(fds) == 0, "pipe");
    const int ep = epoll_create1(0);
    epoll_event ev{};
    ev.events = EPOLLIN;
    Check(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev) == 0, "epoll");
    std::condition_variable tick;
    int timeouts = 0;
    while (!*stop)
    {
        tick.notify_all();
        epoll_event out{};
        if (epoll_wait(ep, &out, 1, 1) == 0)
        {
            ++timeouts;
        }
    }
    close(ep);
    close(fds[0]);
    close(fds[1]);
    return timeouts;
}

/// What the "timer" helper hands over after each timeout (see the top).
struct Ticks
{
    std::mutex m;
    std::condition_variable cv;
    int count{0};
    std::atomic<bool> stop{false};
};

/// The "timer" helper: 20 ms timed waits that nothing ends but their timeout, in turn
/// sem_timedwait (deadline from CLOCK_REALTIME, as CPython computes it), poll on a pipe
/// nobody writes, and a condition variable nobody notifies; after each timeout a token to
/// whoever waits.  Returns the timeouts of each kind.
std::array<int, 3> TimerLoop(Ticks* t)
{
    std::mutex neverMutex;
    std::condition_variable neverCv;
    int cvTimeouts = 0;
    sem_t never;
    Check(sem_init(&never, 0, 0) == 0, "sem_init");
    int fds[2] = {-1, -1};
    Check(pipe(fds) == 0, "pipe");
    int semTimeouts = 0;
    int pollTimeouts = 0;
    for (int i = 0; !t->stop; ++i)
    {
        bool timedOut = false;
        if (i % 3 == 0)
        {
            timespec abs{};
            clock_gettime(CLOCK_REALTIME, &abs);
            abs.tv_nsec += 20000000;
            if (abs.tv_nsec >= 1000000000)
            {
                abs.tv_nsec -= 1000000000;
                ++abs.tv_sec;
            }
            timedOut = sem_timedwait(&never, &abs) == -1 && errno == ETIMEDOUT;
            semTimeouts += timedOut ? 1 : 0;
        }
        else if (i % 3 == 1)
        {
            pollfd p{fds[0], POLLIN, 0};
            timedOut = poll(&p, 1, 20) == 0;
            pollTimeouts += timedOut ? 1 : 0;
        }
        else
        {
            // wait_for's cv_status compares the simulated clock, which the timeout does not
            // move: nobody notifies, so each return is a timeout.
            std::unique_lock lock(neverMutex);
            neverCv.wait_for(lock, std::chrono::milliseconds(20));
            timedOut = true;
            ++cvTimeouts;
        }
        if (timedOut)
        {
            {
                std::lock_guard lock(t->m);
                ++t->count;
            }
            t->cv.notify_all();
        }
    }
    close(fds[0]);
    close(fds[1]);
    sem_destroy(&never);
    return {semTimeouts, pollTimeouts, cvTimeouts};
}

void OnSignal(int) {}

/// Interrupts each of a thread's I/O waits (5 s timeouts on a pipe nobody writes) with
/// a signal and reports the errno each returns with.  Returns the process's exit code.
int InterruptedWaits(int rank)
{
    cudaFree(nullptr); // connects: the waits below are on a thread the bridge knows
    struct sigaction sa
    {
    };
    sa.sa_handler = OnSignal; // no SA_RESTART: the waits return EINTR
    sigemptyset(&sa.sa_mask);
    Check(sigaction(SIGUSR2, &sa, nullptr) == 0, "sigaction");
    int fds[2] = {-1, -1};
    Check(pipe(fds) == 0, "pipe");
    std::atomic<bool> waiting{false};
    std::atomic<bool> done{false};
    int failures = 0;
    std::thread waiter(
        [&]
        {
            auto report = [&](const char* call, int rc, int err)
            {
                const bool ok = rc == -1 && err == EINTR;
                failures += ok ? 0 : 1;
                std::printf("rank %d %s: rc %d errno %d (%s)%s\n", rank, call, rc, err,
                            std::strerror(err), ok ? ", errno kept" : "");
            };
            pollfd p{fds[0], POLLIN, 0};
            waiting = true;
            int rc = poll(&p, 1, 5000);
            int err = errno;
            waiting = false;
            report("poll", rc, err);

            const int ep = epoll_create1(0);
            epoll_event ev{};
            ev.events = EPOLLIN;
            Check(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev) == 0, "epoll");
            epoll_event out{};
            waiting = true;
            rc = epoll_wait(ep, &out, 1, 5000);
            err = errno;
            waiting = false;
            report("epoll_wait", rc, err);
            close(ep);

            fd_set r;
            FD_ZERO(&r);
            FD_SET(fds[0], &r);
            timeval tv{5, 0};
            waiting = true;
            rc = select(fds[0] + 1, &r, nullptr, nullptr, &tv);
            err = errno;
            waiting = false;
            report("select", rc, err);
            done = true;
        });
    // A signal sent just before the thread enters its wait is lost: send until each wait
    // has returned.
    while (!done)
    {
        if (waiting)
        {
            pthread_kill(waiter.native_handle(), SIGUSR2);
        }
        usleep(20000);
    }
    waiter.join();
    std::fflush(stdout);
    return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc >= 2 && std::strcmp(argv[1], "eintr") == 0)
    {
        return InterruptedWaits(std::atoi(std::getenv("RANK")));
    }
    const bool idle = argc >= 2 && std::strcmp(argv[1], "idle") == 0;
    const bool timer = argc >= 2 && std::strcmp(argv[1], "timer") == 0;
    const bool threaded = !idle && !timer && (argc < 2 || std::strcmp(argv[1], "single") != 0);
    const int rank = std::atoi(std::getenv("RANK"));
    const int world = std::atoi(std::getenv("WORLD_SIZE"));
    const int device = std::atoi(std::getenv("LOCAL_RANK"));
    cudaSetDevice(device);
    ncclUniqueId id{};
    const std::string tag = std::string("threads-") + std::getenv("PHANTORA_TOKEN");
    std::memcpy(id.internal, tag.c_str(), std::min(tag.size(), sizeof id.internal));
    Check(ncclCommInitRank(&g_comm, world, id, rank) == ncclSuccess, "comm init");
    Check(cudaMalloc(&g_buf, kFloats * 4) == cudaSuccess, "malloc");
    Check(cudaStreamCreate(&g_stream) == cudaSuccess, "stream");
    for (auto& e : g_events)
    {
        cudaEventCreate(&e);
    }
    Shared shared;
    std::thread worker;
    std::thread poller;
    std::thread io;
    std::thread watchdog;
    int pipeFds[2] = {-1, -1};
    int waiterTimeouts = 0;
    int loopTimeouts = 0;
    std::atomic<bool> stopLoop{false};
    std::thread idleWaiter;
    std::thread idleLoop;
    if (idle)
    {
        idleWaiter = std::thread([&] { waiterTimeouts = IdleWaiter(&shared); });
        idleLoop = std::thread([&] { loopTimeouts = IdleLoop(&stopLoop); });
    }
    Ticks ticks;
    std::array<int, 3> timerTimeouts{};
    std::thread timerThread;
    if (timer)
    {
        timerThread = std::thread([&] { timerTimeouts = TimerLoop(&ticks); });
    }
    if (threaded)
    {
        Check(pipe(pipeFds) == 0, "pipe");
        worker = std::thread(Worker, &shared, device);
        poller = std::thread(Poller, &shared, device);
        io = std::thread(Io, pipeFds[0]);
        watchdog = std::thread(Watchdog, &shared, device);
    }
    for (int step = 0; step < kSteps; ++step)
    {
        const double t0 = NowUs();
        thread_fwd<<<1, 32, 0, g_stream>>>(g_buf);
        if (threaded)
        {
            {
                std::lock_guard lock(shared.m);
                shared.stepToRun = step;
            }
            shared.workReady.notify_one();
            std::unique_lock lock(shared.m);
            shared.workDone.wait(lock, [&] { return shared.stepFinished == step; });
        }
        else
        {
            Backward(step);
        }
        if (idle)
        {
            usleep(75000); // the main thread's sleeps cost it no simulated time
        }
        if (timer)
        {
            usleep(75000); // as in "idle": the helper's timeouts expire meanwhile
            std::unique_lock lock(ticks.m);
            const int seen = ticks.count;
            while (ticks.count == seen)
            {
                ticks.cv.wait_for(lock, std::chrono::milliseconds(5));
            }
        }
        Check(cudaStreamSynchronize(g_stream) == cudaSuccess, "sync");
        std::printf("rank %d step %d time %.3f us\n", rank, step, NowUs() - t0);
    }
    std::fflush(stdout);
    if (idle)
    {
        {
            std::lock_guard lock(shared.m);
            shared.stop = true;
        }
        stopLoop = true;
        idleWaiter.join();
        idleLoop.join();
        std::printf("rank %d idle waiter timed out %d times, idle loop %d times\n", rank,
                    waiterTimeouts, loopTimeouts);
        std::fflush(stdout);
    }
    if (timer)
    {
        ticks.stop = true;
        timerThread.join();
        std::printf("rank %d timer timed out %d times in sem_timedwait, %d times in poll, %d "
                    "times in a condition variable\n",
                    rank, timerTimeouts[0], timerTimeouts[1], timerTimeouts[2]);
        std::fflush(stdout);
    }
    if (threaded)
    {
        {
            std::lock_guard lock(shared.m);
            shared.stop = true;
        }
        shared.workReady.notify_one();
        worker.join();
        poller.join();
        watchdog.join();
        Check(write(pipeFds[1], "x", 1) == 1, "pipe write");
        io.join();
        // A forked helper process (a data-loader worker) sleeps and uses threads of its
        // own: none of it concerns the simulation.
        const pid_t child = fork();
        if (child == 0)
        {
            std::thread t([] { usleep(1000); });
            t.join();
            _exit(0);
        }
        int status = -1;
        Check(child > 0 && waitpid(child, &status, 0) == child && status == 0, "forked child");
        std::printf("rank %d threads joined\n", rank);
    }
    ncclCommDestroy(g_comm);
    return 0;
}
