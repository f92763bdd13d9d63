// CUDA events: each cudaEventRecord is a new record on the bridge's timeline of
// this rank; synchronising, querying, timing and cross-stream waits refer to the
// record that was current when they were called, as CUDA specifies.
#include "cuda_events.h"
#include "cuda_state.h"
#include "handle_table.h"
#include "hook_scope.h"
#include "host_time/host_boundary.h"
#include "id_allocator.h"
#include "stream_capture.h"

#include <atomic>
#include <cuda_runtime_api.h>
#include <memory>

using namespace phantora;
using namespace phantora::interposer;

struct CUevent_st
{
    std::atomic<uint64_t> record{0}; ///< 0: never recorded
    unsigned flags{0};
};

namespace
{

constinit HandleTable<cudaEvent_t, CUevent_st> g_events;

CUevent_st* Lookup(cudaEvent_t e)
{
    return g_events.Find(e);
}

uint64_t NewRecord(const HookScope& scope, cudaStream_t stream)
{
    const uint64_t record = NewId(IdKind::EventRecord);
    scope.Client().Post(wire::EventRecord{StreamId(stream), record});
    return record;
}

/// Whether \p record is done at the caller's clock, decided by the bridge.
bool Done(const HookScope& scope, uint64_t record)
{
    wire::Reply reply = scope.Client().Call(wire::EventWait{record, true});
    const auto* answer = std::get_if<wire::QueryAnswer>(&reply);
    return answer && answer->ready;
}

} // namespace

namespace phantora::interposer
{

uint64_t CurrentRecord(void* event)
{
    CUevent_st* e = Lookup(static_cast<cudaEvent_t>(event));
    return e ? e->record.load() : 0;
}

bool SetCurrentRecord(void* event, uint64_t record)
{
    CUevent_st* e = Lookup(static_cast<cudaEvent_t>(event));
    if (e)
    {
        e->record = record;
    }
    return e != nullptr;
}

} // namespace phantora::interposer

extern "C"
{

    cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags)
    {
        HookScope scope;
        if (!event)
        {
            return Status(cudaErrorInvalidValue);
        }
        auto e = std::make_unique<CUevent_st>();
        e->flags = flags;
        *event = g_events.Adopt(std::move(e));
        return cudaSuccess;
    }

    cudaError_t cudaEventCreate(cudaEvent_t* event)
    {
        return cudaEventCreateWithFlags(event, cudaEventDefault);
    }

    cudaError_t cudaEventDestroy(cudaEvent_t event)
    {
        HookScope scope;
        return g_events.Erase(event) ? cudaSuccess : Status(cudaErrorInvalidResourceHandle);
    }

    cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
    {
        HookScope scope;
        CUevent_st* e = Lookup(event);
        if (!e || (flags & ~cudaEventRecordExternal) != 0)
        {
            return Status(e ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
        }
        if (StreamCapture::AnyActive())
        {
            // In a capture the event marks the stream's dependencies (a fork point), or,
            // external, is a record node of the graph (stream_capture.h).
            StreamCapture& capture = StreamCapture::Get();
            if ((flags & cudaEventRecordExternal)
                    ? capture.CaptureEventNode(StreamId(stream), event, false)
                    : capture.RecordEvent(event, StreamId(stream)))
            {
                return cudaSuccess;
            }
        }
        e->record = NewRecord(scope, stream);
        return cudaSuccess;
    }

    cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
    {
        return cudaEventRecordWithFlags(event, stream, cudaEventRecordDefault);
    }

    cudaError_t cudaEventSynchronize(cudaEvent_t event)
    {
        HookScope scope;
        CUevent_st* e = Lookup(event);
        if (!e)
        {
            return Status(cudaErrorInvalidResourceHandle);
        }
        if (StreamCapture::Get().ForbidsUnsafeCall("cudaEventSynchronize"))
        {
            return Status(cudaErrorStreamCaptureUnsupported);
        }
        if (const uint64_t record = e->record.load())
        {
            wire::Reply reply = scope.Client().Call(wire::EventWait{record, false});
            if (const auto* r = std::get_if<wire::Resume>(&reply))
            {
                SimClock::Get().AdvanceTo(r->clockNs);
            }
        }
        return cudaSuccess;
    }

    cudaError_t cudaEventQuery(cudaEvent_t event)
    {
        HookScope scope;
        CUevent_st* e = Lookup(event);
        if (!e)
        {
            return Status(cudaErrorInvalidResourceHandle);
        }
        if (StreamCapture::Get().ForbidsUnsafeCall("cudaEventQuery"))
        {
            return Status(cudaErrorStreamCaptureUnsupported);
        }
        const uint64_t record = e->record.load();
        // Not-ready is an answer, not an error: it does not become the last error.
        return record == 0 || Done(scope, record) ? cudaSuccess : cudaErrorNotReady;
    }

    cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end)
    {
        HookScope scope;
        CUevent_st* a = Lookup(start);
        CUevent_st* b = Lookup(end);
        if (!ms)
        {
            return Status(cudaErrorInvalidValue);
        }
        if (!a || !b || a->record == 0 || b->record == 0 || (a->flags & cudaEventDisableTiming) ||
            (b->flags & cudaEventDisableTiming))
        {
            return Status(cudaErrorInvalidResourceHandle);
        }
        wire::Reply reply =
            scope.Client().Call(wire::EventElapsed{a->record.load(), b->record.load()});
        const auto* r = std::get_if<wire::Elapsed>(&reply);
        if (!r || !r->ready)
        {
            return cudaErrorNotReady;
        }
        *ms = static_cast<float>(static_cast<double>(r->ns) / 1e6);
        return cudaSuccess;
    }

    cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
    {
        HookScope scope;
        CUevent_st* e = Lookup(event);
        if (!e)
        {
            return Status(cudaErrorInvalidResourceHandle);
        }
        if (StreamCapture::AnyActive())
        {
            StreamCapture& capture = StreamCapture::Get();
            if (flags & cudaEventWaitExternal)
            {
                if (capture.CaptureEventNode(StreamId(stream), event, true))
                {
                    return cudaSuccess;
                }
            }
            else
            {
                switch (capture.WaitEvent(StreamId(stream), event))
                {
                case StreamCapture::WaitOutcome::Captured:
                    return cudaSuccess;
                case StreamCapture::WaitOutcome::Isolation:
                    return Status(cudaErrorStreamCaptureIsolation);
                case StreamCapture::WaitOutcome::NotCaptured:
                    break;
                }
            }
        }
        if (const uint64_t record = e->record.load())
        {
            scope.Client().Post(wire::StreamWaitEvent{StreamId(stream), record});
        }
        return cudaSuccess;
    }

    cudaError_t cudaStreamQuery(cudaStream_t stream)
    {
        // Whether the stream's work so far is done: a record at its tail, queried.
        HookScope scope;
        if (StreamCapture::Get().ForbidsUnsafeCall("cudaStreamQuery"))
        {
            return Status(cudaErrorStreamCaptureUnsupported);
        }
        SimClock::Get().Advance(HostTime::Get().OnBoundary(host_time::boundary::kStreamQuery));
        return Done(scope, NewRecord(scope, stream)) ? cudaSuccess : cudaErrorNotReady;
    }

} // extern "C"
