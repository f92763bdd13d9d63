// CUDA events: each cudaEventRecord is a new record on the bridge's timeline of
// this rank; synchronising, querying, timing and cross-stream waits refer to the
// record that was current when they were called, as CUDA specifies.
#include "cuda_state.h"
#include "handle_table.h"
#include "hook_scope.h"
#include "host_time/host_boundary.h"
#include "id_allocator.h"

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

    cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
    {
        HookScope scope;
        CUevent_st* e = Lookup(event);
        if (!e)
        {
            return Status(cudaErrorInvalidResourceHandle);
        }
        e->record = NewRecord(scope, stream);
        return cudaSuccess;
    }

    cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int)
    {
        return cudaEventRecord(event, stream);
    }

    cudaError_t cudaEventSynchronize(cudaEvent_t event)
    {
        HookScope scope;
        CUevent_st* e = Lookup(event);
        if (!e)
        {
            return Status(cudaErrorInvalidResourceHandle);
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

    cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int)
    {
        HookScope scope;
        CUevent_st* e = Lookup(event);
        if (!e)
        {
            return Status(cudaErrorInvalidResourceHandle);
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
        SimClock::Get().Advance(HostTime::Get().OnBoundary(host_time::boundary::kStreamQuery));
        return Done(scope, NewRecord(scope, stream)) ? cudaSuccess : cudaErrorNotReady;
    }

} // extern "C"
