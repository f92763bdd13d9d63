// CUDA graphs: stream capture, the explicit graph-building calls PyTorch and NCCL make,
// instantiation and launch.  A captured or built graph holds the requests its nodes
// would have sent (cuda_graph.h, stream_capture.h); instantiating it plans their replay
// on streams (graph_replay_plan.h); each cudaGraphLaunch sends them again, at the
// launch's clock, as graph nodes (RankClient::PostGraph): the same op keys as the same
// work issued directly, timed the same, with one launch's host cost for the whole graph
// and the GPU spec's graph node gap after each node.  Host nodes run their function at
// each replay, captured collectives are issued (and matched across ranks) at each replay.
#include "cuda_events.h"
#include "cuda_graph.h"
#include "cuda_state.h"
#include "device_memory.h"
#include "fatal.h"
#include "graph_replay_plan.h"
#include "handle_table.h"
#include "hook_scope.h"
#include "host_function_runner.h"
#include "host_time/host_boundary.h"
#include "id_allocator.h"
#include "kernel_launch.h"
#include "protocol/streams.h"
#include "stream_capture.h"

#include <cstdio>
#include <cuda_runtime_api.h>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace phantora;
using namespace phantora::interposer;

struct CUgraphExec_st
{
    std::unique_ptr<CUgraph_st> graph; ///< its own copy: the program may destroy the graph
    ReplayPlan plan;
    std::vector<uint64_t> streams; ///< slots 1.. of the plan: the graph's own streams
};

namespace
{

constinit HandleTable<cudaGraph_t, CUgraph_st> g_graphs;
constinit HandleTable<cudaGraphExec_t, CUgraphExec_st> g_execs;

cudaError_t ErrorOf(CaptureError e)
{
    switch (e)
    {
    case CaptureError::None:
        return cudaSuccess;
    case CaptureError::NotCapturing:
    case CaptureError::AlreadyCapturing:
        return cudaErrorIllegalState;
    case CaptureError::LegacyStream:
        return cudaErrorStreamCaptureUnsupported;
    case CaptureError::NotOrigin:
        return cudaErrorStreamCaptureUnmatched;
    case CaptureError::WrongThread:
        return cudaErrorStreamCaptureWrongThread;
    case CaptureError::Unjoined:
        return cudaErrorStreamCaptureUnjoined;
    case CaptureError::Invalidated:
        return cudaErrorStreamCaptureInvalidated;
    case CaptureError::Isolation:
        return cudaErrorStreamCaptureIsolation;
    case CaptureError::BadNode:
        return cudaErrorInvalidValue;
    }
    return cudaErrorUnknown;
}

std::vector<CUgraphNode_st*> Nodes(const cudaGraphNode_t* nodes, size_t n)
{
    return nodes ? std::vector<CUgraphNode_st*>(nodes, nodes + n) : std::vector<CUgraphNode_st*>{};
}

/// The graph \p g, if it is one, and whether \p deps are all its nodes.
CUgraph_st* GraphWithDeps(cudaGraph_t g, const cudaGraphNode_t* deps, size_t n)
{
    CUgraph_st* graph = g_graphs.Find(g);
    if (!graph || (n > 0 && !deps))
    {
        return nullptr;
    }
    for (size_t i = 0; i < n; ++i)
    {
        if (!graph->Owns(deps[i]))
        {
            return nullptr;
        }
    }
    return graph;
}

/// An event-record or event-wait node (\p kind) on \p event, after \p deps: the two
/// cudaGraphAddEvent*Node calls differ only in the kind.
cudaError_t AddEventNode(GraphNodeKind kind, cudaGraphNode_t* node, cudaGraph_t g,
                         const cudaGraphNode_t* deps, size_t numDeps, cudaEvent_t event)
{
    CUgraph_st* graph = GraphWithDeps(g, deps, numDeps);
    if (!node || !graph || !event)
    {
        return Status(cudaErrorInvalidValue);
    }
    CUgraphNode_st* n = graph->Add(kind, Nodes(deps, numDeps));
    n->event = event;
    *node = n;
    return cudaSuccess;
}

/// Runs \p issue (a hook that posts one request on a stream) on a stream of its own,
/// captured, and returns the request it posted: how an explicitly added kernel node gets
/// the request the same launch on a stream would have sent.
std::optional<wire::Request> RequestOf(const std::function<cudaError_t(cudaStream_t)>& issue,
                                       cudaError_t& status)
{
    const uint64_t sid = NewId(IdKind::Stream) | wire::kNonBlockingBit;
    StreamCapture& capture = StreamCapture::Get();
    capture.Begin(sid, CaptureMode::Relaxed);
    status = issue(reinterpret_cast<cudaStream_t>(sid));
    StreamCapture::Ended ended = capture.End(sid);
    if (status != cudaSuccess || !ended.graph || ended.graph->nodes.size() != 1)
    {
        return std::nullopt;
    }
    return ended.graph->nodes.front()->op;
}

cudaGraphNodeType TypeOf(const CUgraphNode_st& n)
{
    switch (n.kind)
    {
    case GraphNodeKind::Op:
        if (const auto* m = std::get_if<wire::Memcpy>(&n.op))
        {
            return m->kind == wire::CopyKind::Memset ? cudaGraphNodeTypeMemset
                                                     : cudaGraphNodeTypeMemcpy;
        }
        return cudaGraphNodeTypeKernel; // kernels, library calls, NCCL's kernels
    case GraphNodeKind::Host:
        return cudaGraphNodeTypeHost;
    case GraphNodeKind::Empty:
        return cudaGraphNodeTypeEmpty;
    case GraphNodeKind::EventRecord:
        return cudaGraphNodeTypeEventRecord;
    case GraphNodeKind::EventWait:
        return cudaGraphNodeTypeWaitEvent;
    case GraphNodeKind::Child:
        return cudaGraphNodeTypeGraph;
    }
    return cudaGraphNodeTypeEmpty;
}

wire::CopyKind CopyKindOf(cudaMemcpyKind kind, const void* dst, const void* src)
{
    if (kind == cudaMemcpyDefault)
    {
        const bool d = DeviceMemory::Get().Contains(dst);
        const bool s = DeviceMemory::Get().Contains(src);
        return d ? (s ? wire::CopyKind::DeviceToDevice : wire::CopyKind::HostToDevice)
                 : (s ? wire::CopyKind::DeviceToHost : wire::CopyKind::HostToHost);
    }
    return static_cast<wire::CopyKind>(kind);
}

/// Writes the count of \p nodes (and the nodes, if \p out) as CUDA's list queries do.
cudaError_t ListNodes(const std::vector<CUgraphNode_st*>& nodes, cudaGraphNode_t* out,
                      cudaGraphEdgeData* edges, size_t* count)
{
    if (!count)
    {
        return Status(cudaErrorInvalidValue);
    }
    if (!out)
    {
        *count = nodes.size();
        return cudaSuccess;
    }
    const size_t n = std::min(*count, nodes.size());
    for (size_t i = 0; i < n; ++i)
    {
        out[i] = nodes[i];
        if (edges)
        {
            edges[i] = cudaGraphEdgeData{};
        }
    }
    for (size_t i = n; i < *count; ++i)
    {
        out[i] = nullptr;
    }
    *count = n;
    return cudaSuccess;
}

struct PendingHost
{
    uint64_t stream;
    HostFunctionRunner::Call call;
};

/// The requests of one replay of \p exec on \p launch, and the host functions to hand to
/// their streams' runners once they are sent.
std::vector<wire::Request> ExpandReplay(const CUgraphExec_st& exec, uint64_t launch,
                                        std::vector<PendingHost>& hosts)
{
    std::vector<uint64_t> records(exec.plan.records);
    for (uint64_t& r : records)
    {
        r = NewId(IdKind::EventRecord);
    }
    auto streamOf = [&](uint32_t slot) { return slot == 0 ? launch : exec.streams[slot - 1]; };
    std::vector<wire::Request> out;
    for (const ReplayStep& step : exec.plan.steps)
    {
        const uint64_t sid = streamOf(step.slot);
        switch (step.kind)
        {
        case ReplayStep::Kind::Record:
            out.emplace_back(wire::EventRecord{sid, records[step.record]});
            break;
        case ReplayStep::Kind::Wait:
            out.emplace_back(wire::StreamWaitEvent{sid, records[step.record]});
            break;
        case ReplayStep::Kind::Node:
        {
            const CUgraphNode_st& n = *step.node;
            switch (n.kind)
            {
            case GraphNodeKind::Op:
            {
                wire::Request r = n.op;
                *StreamOf(r) = sid;
                out.push_back(std::move(r));
                break;
            }
            case GraphNodeKind::Host:
            {
                PendingHost h{
                    sid, {n.host, NewId(IdKind::HostFunctionRecord), NewId(IdKind::HostFunction)}};
                out.emplace_back(wire::EventRecord{sid, h.call.record});
                out.emplace_back(wire::HostFunction{sid, h.call.id});
                hosts.push_back(std::move(h));
                break;
            }
            case GraphNodeKind::EventRecord:
            {
                const uint64_t record = NewId(IdKind::EventRecord);
                out.emplace_back(wire::EventRecord{sid, record});
                SetCurrentRecord(n.event, record);
                break;
            }
            case GraphNodeKind::EventWait:
                if (const uint64_t record = CurrentRecord(n.event))
                {
                    out.emplace_back(wire::StreamWaitEvent{sid, record});
                }
                break;
            case GraphNodeKind::Empty:
            case GraphNodeKind::Child: // inlined at instantiation (FlattenChildren)
                break;
            }
            break;
        }
        }
    }
    return out;
}

cudaError_t Instantiate(cudaGraphExec_t* out, cudaGraph_t g)
{
    HookScope scope;
    CUgraph_st* graph = g_graphs.Find(g);
    if (!out || !graph)
    {
        return Status(cudaErrorInvalidValue);
    }
    auto exec = std::make_unique<CUgraphExec_st>();
    exec->graph = graph->Clone();
    exec->graph->FlattenChildren();
    try
    {
        exec->plan = PlanReplay(*exec->graph);
    }
    catch (const std::invalid_argument&)
    {
        return Status(cudaErrorInvalidValue);
    }
    for (uint32_t s = 1; s < exec->plan.slots; ++s)
    {
        exec->streams.push_back(NewId(IdKind::Stream) | wire::kNonBlockingBit);
    }
    *out = g_execs.Adopt(std::move(exec));
    return cudaSuccess;
}

} // namespace

extern "C"
{

    // ---- stream capture ----

    cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode)
    {
        HookScope scope;
        if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
            mode != cudaStreamCaptureModeRelaxed)
        {
            return Status(cudaErrorInvalidValue);
        }
        return Status(
            ErrorOf(StreamCapture::Get().Begin(StreamId(stream), static_cast<CaptureMode>(mode))));
    }

    cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode)
    {
        return cudaStreamBeginCapture(stream, mode);
    }

    cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph)
    {
        HookScope scope;
        if (!graph)
        {
            return Status(cudaErrorInvalidValue);
        }
        StreamCapture::Ended ended = StreamCapture::Get().End(StreamId(stream));
        *graph = ended.graph ? g_graphs.Adopt(std::move(ended.graph)) : nullptr;
        return Status(ErrorOf(ended.error));
    }

    cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* graph)
    {
        return cudaStreamEndCapture(stream, graph);
    }

    // The capture status queries answer from the interposer's state without a HookScope,
    // as they did before captures were simulated: a process that is no rank (the fork
    // server, a launcher) may ask whether its current stream captures, and must not connect.
    cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status)
    {
        if (!status)
        {
            return Status(cudaErrorInvalidValue);
        }
        *status = static_cast<cudaStreamCaptureStatus>(
            StreamCapture::AnyActive() ? StreamCapture::Get().Query(StreamId(stream)).status
                                       : CaptureStatus::None);
        return cudaSuccess;
    }

    cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                         unsigned long long* id, cudaGraph_t* graph,
                                         const cudaGraphNode_t** deps,
                                         const cudaGraphEdgeData** edges, size_t* numDeps)
    {
        if (!status)
        {
            return Status(cudaErrorInvalidValue);
        }
        const StreamCapture::Info info = StreamCapture::AnyActive()
                                             ? StreamCapture::Get().Query(StreamId(stream))
                                             : StreamCapture::Info{};
        *status = static_cast<cudaStreamCaptureStatus>(info.status);
        const bool active = info.status == CaptureStatus::Active;
        if (id)
        {
            *id = info.id;
        }
        if (graph)
        {
            *graph = active ? info.graph : nullptr;
        }
        if (deps)
        {
            *deps = active && !info.deps->empty() ? info.deps->data() : nullptr;
        }
        if (edges)
        {
            *edges = nullptr; // every edge is a default one
        }
        if (numDeps)
        {
            *numDeps = active ? info.deps->size() : 0;
        }
        return cudaSuccess;
    }

    cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                              unsigned long long* id, cudaGraph_t* graph,
                                              const cudaGraphNode_t** deps,
                                              const cudaGraphEdgeData** edges, size_t* numDeps)
    {
        return cudaStreamGetCaptureInfo(stream, status, id, graph, deps, edges, numDeps);
    }

    cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* deps,
                                                    const cudaGraphEdgeData*, size_t numDeps,
                                                    unsigned int flags)
    {
        HookScope scope;
        if ((numDeps > 0 && !deps) || (flags != cudaStreamAddCaptureDependencies &&
                                       flags != cudaStreamSetCaptureDependencies))
        {
            return Status(cudaErrorInvalidValue);
        }
        return Status(ErrorOf(StreamCapture::Get().UpdateDependencies(
            StreamId(stream), Nodes(deps, numDeps), flags == cudaStreamSetCaptureDependencies)));
    }

    cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream, cudaGraphNode_t* deps,
                                                         const cudaGraphEdgeData* edges,
                                                         size_t numDeps, unsigned int flags)
    {
        return cudaStreamUpdateCaptureDependencies(stream, deps, edges, numDeps, flags);
    }

    cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode)
    {
        if (!mode ||
            (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal &&
             *mode != cudaStreamCaptureModeRelaxed))
        {
            return Status(cudaErrorInvalidValue);
        }
        *mode = static_cast<cudaStreamCaptureMode>(
            StreamCapture::ExchangeThreadMode(static_cast<CaptureMode>(*mode)));
        return cudaSuccess;
    }

    // ---- graphs: building and inspecting ----

    cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags)
    {
        HookScope scope;
        if (!graph || flags != 0)
        {
            return Status(cudaErrorInvalidValue);
        }
        *graph = g_graphs.Adopt(std::make_unique<CUgraph_st>());
        return cudaSuccess;
    }

    cudaError_t cudaGraphDestroy(cudaGraph_t graph)
    {
        HookScope scope;
        return g_graphs.Erase(graph) ? cudaSuccess : Status(cudaErrorInvalidValue);
    }

    cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t g,
                                      const cudaGraphNode_t* deps, size_t numDeps)
    {
        HookScope scope;
        CUgraph_st* graph = GraphWithDeps(g, deps, numDeps);
        if (!node || !graph)
        {
            return Status(cudaErrorInvalidValue);
        }
        *node = graph->Add(GraphNodeKind::Empty, Nodes(deps, numDeps));
        return cudaSuccess;
    }

    cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t g,
                                       const cudaGraphNode_t* deps, size_t numDeps,
                                       const cudaKernelNodeParams* params)
    {
        HookScope scope;
        CUgraph_st* graph = GraphWithDeps(g, deps, numDeps);
        if (!node || !graph || !params || !params->func || params->extra)
        {
            return Status(cudaErrorInvalidValue);
        }
        cudaError_t status = cudaSuccess;
        std::optional<wire::Request> op = RequestOf(
            [&](cudaStream_t s)
            {
                return LaunchKernel(params->func, params->gridDim, params->blockDim,
                                    params->kernelParams, params->sharedMemBytes, s);
            },
            status);
        if (!op)
        {
            return Status(status == cudaSuccess ? cudaErrorInvalidValue : status);
        }
        CUgraphNode_st* n = graph->Add(GraphNodeKind::Op, Nodes(deps, numDeps));
        n->op = std::move(*op);
        *node = n;
        return cudaSuccess;
    }

    cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t g,
                                         const cudaGraphNode_t* deps, size_t numDeps, void* dst,
                                         const void* src, size_t count, cudaMemcpyKind kind)
    {
        HookScope scope;
        CUgraph_st* graph = GraphWithDeps(g, deps, numDeps);
        if (!node || !graph || !dst || !src)
        {
            return Status(cudaErrorInvalidValue);
        }
        CUgraphNode_st* n = graph->Add(GraphNodeKind::Op, Nodes(deps, numDeps));
        n->op = wire::Memcpy{0, CopyKindOf(kind, dst, src), count, false};
        *node = n;
        return cudaSuccess;
    }

    cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t g,
                                       const cudaGraphNode_t* deps, size_t numDeps,
                                       const cudaMemcpy3DParms* p)
    {
        HookScope scope;
        CUgraph_st* graph = GraphWithDeps(g, deps, numDeps);
        if (!node || !graph || !p || p->srcArray || p->dstArray)
        {
            return Status(cudaErrorInvalidValue);
        }
        const uint64_t bytes = uint64_t{p->extent.width} * std::max<size_t>(p->extent.height, 1) *
                               std::max<size_t>(p->extent.depth, 1);
        CUgraphNode_st* n = graph->Add(GraphNodeKind::Op, Nodes(deps, numDeps));
        n->op = wire::Memcpy{0, CopyKindOf(p->kind, p->dstPtr.ptr, p->srcPtr.ptr), bytes, false};
        *node = n;
        return cudaSuccess;
    }

    cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t g,
                                       const cudaGraphNode_t* deps, size_t numDeps,
                                       const cudaMemsetParams* p)
    {
        HookScope scope;
        CUgraph_st* graph = GraphWithDeps(g, deps, numDeps);
        if (!node || !graph || !p || !p->dst ||
            (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
        {
            return Status(cudaErrorInvalidValue);
        }
        const uint64_t bytes = uint64_t{p->elementSize} * p->width * std::max<size_t>(p->height, 1);
        CUgraphNode_st* n = graph->Add(GraphNodeKind::Op, Nodes(deps, numDeps));
        n->op = wire::Memcpy{0, wire::CopyKind::Memset, bytes, false};
        *node = n;
        return cudaSuccess;
    }

    cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t g,
                                     const cudaGraphNode_t* deps, size_t numDeps,
                                     const cudaHostNodeParams* p)
    {
        HookScope scope;
        CUgraph_st* graph = GraphWithDeps(g, deps, numDeps);
        if (!node || !graph || !p || !p->fn)
        {
            return Status(cudaErrorInvalidValue);
        }
        CUgraphNode_st* n = graph->Add(GraphNodeKind::Host, Nodes(deps, numDeps));
        n->host = [fn = p->fn, data = p->userData] { fn(data); };
        *node = n;
        return cudaSuccess;
    }

    cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t g,
                                            const cudaGraphNode_t* deps, size_t numDeps,
                                            cudaEvent_t event)
    {
        HookScope scope;
        return AddEventNode(GraphNodeKind::EventRecord, node, g, deps, numDeps, event);
    }

    cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t g,
                                          const cudaGraphNode_t* deps, size_t numDeps,
                                          cudaEvent_t event)
    {
        HookScope scope;
        return AddEventNode(GraphNodeKind::EventWait, node, g, deps, numDeps, event);
    }

    // A conditional node (IF, WHILE, SWITCH) picks what a replay runs from a value a kernel
    // writes on the device through cudaGraphSetConditional: a value the simulation does not
    // compute, so no replay could be timed.  Refused where the program first asks for one.
    cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle*, cudaGraph_t,
                                                 unsigned int, unsigned int)
    {
        HookScope scope;
        Fatal("conditional CUDA graph nodes are not simulated (cudaGraphConditionalHandleCreate): "
              "a kernel chooses their branch or loop count on the device at each replay, from "
              "values the simulation does not compute; capture the branch the program takes "
              "(or the loop unrolled) instead");
    }

    // The generic form of the cudaGraphAdd*Node calls (CUDA 12.3): the node kinds whose
    // parameters say all their work here; the others end the rank naming their type.
    cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps,
                                 const cudaGraphEdgeData*, size_t numDeps,
                                 cudaGraphNodeParams* params)
    {
        if (!params)
        {
            return Status(cudaErrorInvalidValue);
        }
        switch (params->type)
        {
        case cudaGraphNodeTypeEmpty:
            return cudaGraphAddEmptyNode(node, g, deps, numDeps);
        case cudaGraphNodeTypeGraph:
            return cudaGraphAddChildGraphNode(node, g, deps, numDeps, params->graph.graph);
        case cudaGraphNodeTypeEventRecord:
            return cudaGraphAddEventRecordNode(node, g, deps, numDeps, params->eventRecord.event);
        case cudaGraphNodeTypeWaitEvent:
            return cudaGraphAddEventWaitNode(node, g, deps, numDeps, params->eventWait.event);
        case cudaGraphNodeTypeConditional:
            cudaGraphConditionalHandleCreate(nullptr, g, 0, 0);
            return cudaErrorNotSupported; // not reached
        default:
        {
            HookScope scope;
            Fatal("cudaGraphAddNode of node type " + std::to_string(params->type) +
                  " is not simulated: add it with its own call (cudaGraphAddKernelNode, "
                  "cudaGraphAddMemcpyNode, cudaGraphAddMemsetNode, cudaGraphAddHostNode)");
        }
        }
    }

    // The node runs its own copy of the child as it is now (CUDA clones it too); replays
    // run the child's nodes in its place (CUgraph_st::FlattenChildren).
    cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t g,
                                           const cudaGraphNode_t* deps, size_t numDeps,
                                           cudaGraph_t childGraph)
    {
        HookScope scope;
        CUgraph_st* graph = GraphWithDeps(g, deps, numDeps);
        const CUgraph_st* child = g_graphs.Find(childGraph);
        if (!node || !graph || !child || child == graph)
        {
            return Status(cudaErrorInvalidValue);
        }
        CUgraphNode_st* n = graph->Add(GraphNodeKind::Child, Nodes(deps, numDeps));
        n->child = child->Clone();
        *node = n;
        return cudaSuccess;
    }

    cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from,
                                         const cudaGraphNode_t* to, const cudaGraphEdgeData*,
                                         size_t n)
    {
        HookScope scope;
        CUgraph_st* graph = g_graphs.Find(g);
        if (!graph || (n > 0 && (!from || !to)))
        {
            return Status(cudaErrorInvalidValue);
        }
        for (size_t i = 0; i < n; ++i)
        {
            if (!graph->Owns(from[i]) || !graph->Owns(to[i]) || from[i] == to[i])
            {
                return Status(cudaErrorInvalidValue);
            }
        }
        for (size_t i = 0; i < n; ++i)
        {
            AddEdge(from[i], to[i]);
        }
        return cudaSuccess;
    }

    cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from,
                                            const cudaGraphNode_t* to, const cudaGraphEdgeData*,
                                            size_t n)
    {
        HookScope scope;
        CUgraph_st* graph = g_graphs.Find(g);
        if (!graph || (n > 0 && (!from || !to)))
        {
            return Status(cudaErrorInvalidValue);
        }
        for (size_t i = 0; i < n; ++i)
        {
            if (!graph->Owns(from[i]) || !graph->Owns(to[i]) || !RemoveEdge(from[i], to[i]))
            {
                return Status(cudaErrorInvalidValue);
            }
        }
        return cudaSuccess;
    }

    cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count)
    {
        HookScope scope;
        CUgraph_st* graph = g_graphs.Find(g);
        if (!graph)
        {
            return Status(cudaErrorInvalidValue);
        }
        std::vector<CUgraphNode_st*> all;
        for (const auto& n : graph->nodes)
        {
            all.push_back(n.get());
        }
        return ListNodes(all, nodes, nullptr, count);
    }

    cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count)
    {
        HookScope scope;
        CUgraph_st* graph = g_graphs.Find(g);
        if (!graph)
        {
            return Status(cudaErrorInvalidValue);
        }
        std::vector<CUgraphNode_st*> roots;
        for (const auto& n : graph->nodes)
        {
            if (n->deps.empty())
            {
                roots.push_back(n.get());
            }
        }
        return ListNodes(roots, nodes, nullptr, count);
    }

    cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps,
                                             cudaGraphEdgeData* edges, size_t* count)
    {
        HookScope scope;
        if (!node)
        {
            return Status(cudaErrorInvalidValue);
        }
        return ListNodes(node->deps, deps, edges, count);
    }

    cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* out,
                                               cudaGraphEdgeData* edges, size_t* count)
    {
        HookScope scope;
        if (!node)
        {
            return Status(cudaErrorInvalidValue);
        }
        return ListNodes(node->dependents, out, edges, count);
    }

    cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* type)
    {
        HookScope scope;
        if (!node || !type)
        {
            return Status(cudaErrorInvalidValue);
        }
        *type = TypeOf(*node);
        return cudaSuccess;
    }

    cudaError_t cudaGraphDebugDotPrint(cudaGraph_t g, const char* path, unsigned int)
    {
        HookScope scope;
        CUgraph_st* graph = g_graphs.Find(g);
        if (!graph || !path)
        {
            return Status(cudaErrorInvalidValue);
        }
        std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path, "w"), &std::fclose);
        if (!f)
        {
            return Status(cudaErrorOperatingSystem);
        }
        std::fprintf(f.get(), "digraph cuda_graph {\n");
        for (std::size_t i = 0; i < graph->nodes.size(); ++i)
        {
            const CUgraphNode_st& n = *graph->nodes[i];
            std::string label = wire::RequestName(n.op);
            if (const auto* k = std::get_if<wire::KernelLaunch>(&n.op))
            {
                label = k->name.substr(0, 80);
            }
            if (n.kind != GraphNodeKind::Op)
            {
                label = n.kind == GraphNodeKind::Host          ? "host"
                        : n.kind == GraphNodeKind::Empty       ? "empty"
                        : n.kind == GraphNodeKind::EventRecord ? "event record"
                        : n.kind == GraphNodeKind::EventWait   ? "event wait"
                                                               : "child graph";
            }
            for (char& c : label)
            {
                c = c == '"' ? '\'' : c;
            }
            std::fprintf(f.get(), "  n%zu [label=\"%s\"];\n", i, label.c_str());
        }
        for (std::size_t i = 0; i < graph->nodes.size(); ++i)
        {
            for (const CUgraphNode_st* d : graph->nodes[i]->deps)
            {
                for (std::size_t j = 0; j < graph->nodes.size(); ++j)
                {
                    if (graph->nodes[j].get() == d)
                    {
                        std::fprintf(f.get(), "  n%zu -> n%zu;\n", j, i);
                    }
                }
            }
        }
        std::fprintf(f.get(), "}\n");
        return cudaSuccess;
    }

    // ---- executable graphs ----

    cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long)
    {
        return Instantiate(exec, graph);
    }

    cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                              unsigned long long flags)
    {
        // Auto-free on launch, device launch, priority: none changes what a replay runs;
        // an upload at instantiation (cudaGraphInstantiateFlagUpload) costs nothing here.
        (void)flags;
        return Instantiate(exec, graph);
    }

    cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* exec, cudaGraph_t graph,
                                               cudaGraphInstantiateParams* params)
    {
        if (!params)
        {
            return Status(cudaErrorInvalidValue);
        }
        params->result_out = cudaGraphInstantiateSuccess;
        params->errNode_out = nullptr;
        const cudaError_t e = Instantiate(exec, graph);
        if (e != cudaSuccess)
        {
            params->result_out = cudaGraphInstantiateError;
        }
        return e;
    }

    cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                    cudaGraphInstantiateParams* params)
    {
        return cudaGraphInstantiateWithParams(exec, graph, params);
    }

    cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
    {
        HookScope scope;
        return g_execs.Erase(exec) ? cudaSuccess : Status(cudaErrorInvalidValue);
    }

    cudaError_t cudaGraphExecUpdate(cudaGraphExec_t e, cudaGraph_t g,
                                    cudaGraphExecUpdateResultInfo* info)
    {
        HookScope scope;
        CUgraphExec_st* exec = g_execs.Find(e);
        CUgraph_st* graph = g_graphs.Find(g);
        if (!exec || !graph)
        {
            return Status(cudaErrorInvalidValue);
        }
        // Only the nodes' parameters may change, as CUDA allows: same nodes, same kinds.
        bool same = graph->nodes.size() == exec->graph->nodes.size();
        for (std::size_t i = 0; same && i < graph->nodes.size(); ++i)
        {
            same = TypeOf(*graph->nodes[i]) == TypeOf(*exec->graph->nodes[i]) &&
                   graph->nodes[i]->deps.size() == exec->graph->nodes[i]->deps.size();
        }
        if (info)
        {
            *info = cudaGraphExecUpdateResultInfo{};
            info->result =
                same ? cudaGraphExecUpdateSuccess : cudaGraphExecUpdateErrorTopologyChanged;
        }
        if (!same)
        {
            return Status(cudaErrorGraphExecUpdateFailure);
        }
        std::unique_ptr<CUgraph_st> copy = graph->Clone();
        ReplayPlan plan;
        try
        {
            plan = PlanReplay(*copy);
        }
        catch (const std::invalid_argument&)
        {
            return Status(cudaErrorInvalidValue);
        }
        if (plan.slots != exec->plan.slots)
        {
            if (info)
            {
                info->result = cudaGraphExecUpdateErrorTopologyChanged;
            }
            return Status(cudaErrorGraphExecUpdateFailure);
        }
        exec->graph = std::move(copy);
        exec->plan = std::move(plan);
        return cudaSuccess;
    }

    cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t)
    {
        // The real upload moves the graph's launch data to the GPU ahead of its first
        // launch; the simulated launch costs the same either way.
        HookScope scope;
        return g_execs.Find(exec) ? cudaSuccess : Status(cudaErrorInvalidValue);
    }

    cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t stream)
    {
        return cudaGraphUpload(exec, stream);
    }

    cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t stream)
    {
        CUgraphExec_st* exec = g_execs.Find(e);
        if (!exec)
        {
            return Status(cudaErrorInvalidValue);
        }
        const uint64_t sid = StreamId(stream);
        if (StreamCapture::AnyActive() && StreamCapture::Get().Capturing(sid))
        {
            // A graph launched into a capture becomes a child-graph node of it, as in CUDA.
            HookScope scope;
            scope.Client().ChargeBoundary(host_time::boundary::kGraphLaunch);
            StreamCapture::Get().CaptureChild(sid, exec->graph->Clone());
            return cudaSuccess;
        }
        // As cudaLaunchHostFunc does (host_functions.cc): connected, and the runners of the
        // host nodes' streams started, before the hook, so that their threads are announced.
        (void)RankClient::Get();
        std::vector<PendingHost> hosts;
        std::vector<wire::Request> requests = ExpandReplay(*exec, sid, hosts);
        for (const PendingHost& h : hosts)
        {
            (void)HostFunctionRunner::For(h.stream);
        }
        {
            HookScope scope;
            for (const auto& hook : exec->graph->replayHooks)
            {
                hook();
            }
            scope.Client().PostGraph(std::move(requests), host_time::boundary::kGraphLaunch);
        }
        // Outside the hook: the hand-off to the runners carries this thread's clock.
        for (PendingHost& h : hosts)
        {
            HostFunctionRunner::For(h.stream).Push(std::move(h.call));
        }
        return cudaSuccess;
    }

    cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream)
    {
        return cudaGraphLaunch(exec, stream);
    }

} // extern "C"
