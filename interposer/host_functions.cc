// cudaLaunchHostFunc and cudaStreamAddCallback.  As in CUDA, the function runs on
// a thread of the runtime (here one per stream, so that streams never wait for
// each other's callbacks) once the stream's earlier work is done, and the stream's
// later work starts only after it returned.
//
// The stream gets a record (the point the function waits for) and a hold (which
// the bridge keeps closed until told the function returned).  The stream's thread
// waits for the record like cudaEventSynchronize does, so its clock is then the
// simulated instant the stream reached the function; it runs the function for
// real (its CPU time counts like any program code), then reports it done at its
// clock.  The threads are started through pthread_create like the program's own,
// so they are lanes of the rank with their own clocks, and a launch hands over to
// them through a condition variable (thread_handoff.cc).
#include "cuda_state.h"
#include "hook_scope.h"
#include "id_allocator.h"

#include <condition_variable>
#include <cuda_runtime_api.h>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <pthread.h>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

struct Call
{
    std::function<void()> fn;
    uint64_t record{0}; ///< done when the stream reached the function
    uint64_t id{0};     ///< the bridge's hold
};

/// The thread that runs one stream's host functions, in order.
class StreamRunner
{
public:
    explicit StreamRunner(uint64_t stream) : m_stream(stream)
    {
        pthread_t t{};
        if (pthread_create(&t, nullptr, &StreamRunner::Main, this) != 0)
        {
            Fatal("cannot start the host-function thread");
        }
        pthread_detach(t);
    }

    void Push(Call c)
    {
        {
            std::lock_guard lock(m_mutex);
            m_queue.push_back(std::move(c));
        }
        m_ready.notify_one();
    }

private:
    static void* Main(void* self)
    {
        static_cast<StreamRunner*>(self)->Run();
        return nullptr;
    }

    [[noreturn]] void Run()
    {
        for (;;)
        {
            Call c;
            {
                std::unique_lock lock(m_mutex);
                m_ready.wait(lock, [this] { return !m_queue.empty(); });
                c = std::move(m_queue.front());
                m_queue.pop_front();
            }
            {
                HookScope scope;
                wire::Reply reply = scope.Client().Call(wire::EventWait{c.record, false});
                if (const auto* r = std::get_if<wire::Resume>(&reply))
                {
                    SimClock::Get().AdvanceTo(r->clockNs);
                }
            }
            c.fn();
            HookScope scope;
            scope.Client().Post(wire::HostFunctionDone{c.id});
        }
    }

    uint64_t m_stream;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<Call> m_queue;
};

std::mutex g_runnersMutex;

/// Never destroyed: their threads wait on them until the process ends.
std::map<uint64_t, StreamRunner*>& Runners()
{
    static auto* runners = std::make_unique<std::map<uint64_t, StreamRunner*>>().release();
    return *runners;
}

StreamRunner& RunnerFor(uint64_t stream)
{
    std::lock_guard lock(g_runnersMutex);
    StreamRunner*& r = Runners()[stream];
    if (!r)
    {
        r = std::make_unique<StreamRunner>(stream).release();
    }
    return *r;
}

cudaError_t Launch(cudaStream_t stream, std::function<void()> fn)
{
    // Connected first, so that the runner thread is announced to the bridge at its start.
    (void)RankClient::Get();
    const uint64_t sid = StreamId(stream);
    StreamRunner& runner = RunnerFor(sid);
    Call c;
    c.fn = std::move(fn);
    c.record = NewId(IdKind::HostFunctionRecord);
    c.id = NewId(IdKind::HostFunction);
    {
        HookScope scope;
        scope.Client().Post(wire::EventRecord{sid, c.record});
        scope.Client().Post(wire::HostFunction{sid, c.id});
    }
    // Outside the hook: the hand-off to the runner carries this thread's clock.
    runner.Push(std::move(c));
    return cudaSuccess;
}

} // namespace

extern "C"
{

    cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData)
    {
        if (!fn)
        {
            return Status(cudaErrorInvalidValue);
        }
        return Launch(stream, [fn, userData] { fn(userData); });
    }

    cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                      void* userData, unsigned int flags)
    {
        if (!callback || flags != 0)
        {
            return Status(cudaErrorInvalidValue);
        }
        return Launch(stream,
                      [callback, stream, userData] { callback(stream, cudaSuccess, userData); });
    }

} // extern "C"
