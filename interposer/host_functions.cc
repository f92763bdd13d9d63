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
// them through a condition variable (thread_handoff.cc).  host_function_runner.h
// holds the per-stream threads.
#include "cuda_state.h"
#include "hook_scope.h"
#include "host_function_runner.h"
#include "host_time/host_boundary.h"
#include "id_allocator.h"
#include "stream_capture.h"

#include <cuda_runtime_api.h>
#include <functional>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

cudaError_t Launch(cudaStream_t stream, std::function<void()> fn)
{
    // Connected first, so that the runner thread is announced to the bridge at its start.
    (void)RankClient::Get();
    const uint64_t sid = StreamId(stream);
    if (StreamCapture::AnyActive())
    {
        HookScope scope;
        if (StreamCapture::Get().CaptureHost(sid, fn))
        {
            // A host node: the function runs at each replay (cuda_graph_hooks.cc).
            SimClock::Get().Advance(HostTime::Get().OnBoundary(host_time::boundary::kHostFunction));
            return cudaSuccess;
        }
    }
    HostFunctionRunner& runner = HostFunctionRunner::For(sid);
    HostFunctionRunner::Call c;
    c.fn = std::move(fn);
    c.record = NewId(IdKind::HostFunctionRecord);
    c.id = NewId(IdKind::HostFunction);
    {
        HookScope scope;
        // One boundary, as the recorder sees the call (not the record it is made of).
        SimClock::Get().Advance(HostTime::Get().OnBoundary(host_time::boundary::kHostFunction));
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
