// The driver API's stream capture and graph launch, for programs and libraries that
// reach CUDA graphs through it: the driver's handles are the runtime's (CUstream is
// cudaStream_t, CUgraph cudaGraph_t), and the error codes these calls return are the
// same numbers in both APIs, so each forwards to its runtime twin (cuda_graph_hooks.cc).
// Declared here without cuda.h, whose macros would rename each to its newest version:
// every version the driver exports is defined, by its own name.
#include <cuda_runtime_api.h>

namespace
{
/// CUresult: an enum of int size whose graph-related values are cudaError_t's.
using CUresultAbi = int;

CUresultAbi Driver(cudaError_t e)
{
    return static_cast<CUresultAbi>(e);
}
} // namespace

extern "C"
{

    CUresultAbi cuStreamBeginCapture_v2(cudaStream_t s, int mode)
    {
        return Driver(cudaStreamBeginCapture(s, static_cast<cudaStreamCaptureMode>(mode)));
    }
    CUresultAbi cuStreamBeginCapture_v2_ptsz(cudaStream_t s, int mode)
    {
        return cuStreamBeginCapture_v2(s, mode);
    }
    /// The first version had no mode: a global capture.
    CUresultAbi cuStreamBeginCapture(cudaStream_t s)
    {
        return cuStreamBeginCapture_v2(s, cudaStreamCaptureModeGlobal);
    }
    CUresultAbi cuStreamBeginCapture_ptsz(cudaStream_t s)
    {
        return cuStreamBeginCapture(s);
    }

    CUresultAbi cuStreamEndCapture(cudaStream_t s, cudaGraph_t* graph)
    {
        return Driver(cudaStreamEndCapture(s, graph));
    }
    CUresultAbi cuStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t* graph)
    {
        return cuStreamEndCapture(s, graph);
    }

    CUresultAbi cuStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status)
    {
        return Driver(cudaStreamIsCapturing(s, status));
    }
    CUresultAbi cuStreamIsCapturing_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status)
    {
        return cuStreamIsCapturing(s, status);
    }

    CUresultAbi cuStreamGetCaptureInfo_v3(cudaStream_t s, cudaStreamCaptureStatus* status,
                                          unsigned long long* id, cudaGraph_t* graph,
                                          const cudaGraphNode_t** deps,
                                          const cudaGraphEdgeData** edges, size_t* numDeps)
    {
        return Driver(cudaStreamGetCaptureInfo(s, status, id, graph, deps, edges, numDeps));
    }
    CUresultAbi cuStreamGetCaptureInfo_v3_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status,
                                               unsigned long long* id, cudaGraph_t* graph,
                                               const cudaGraphNode_t** deps,
                                               const cudaGraphEdgeData** edges, size_t* numDeps)
    {
        return cuStreamGetCaptureInfo_v3(s, status, id, graph, deps, edges, numDeps);
    }
    CUresultAbi cuStreamGetCaptureInfo_v2(cudaStream_t s, cudaStreamCaptureStatus* status,
                                          unsigned long long* id, cudaGraph_t* graph,
                                          const cudaGraphNode_t** deps, size_t* numDeps)
    {
        return cuStreamGetCaptureInfo_v3(s, status, id, graph, deps, nullptr, numDeps);
    }
    CUresultAbi cuStreamGetCaptureInfo_v2_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status,
                                               unsigned long long* id, cudaGraph_t* graph,
                                               const cudaGraphNode_t** deps, size_t* numDeps)
    {
        return cuStreamGetCaptureInfo_v2(s, status, id, graph, deps, numDeps);
    }
    CUresultAbi cuStreamGetCaptureInfo(cudaStream_t s, cudaStreamCaptureStatus* status,
                                       unsigned long long* id)
    {
        return cuStreamGetCaptureInfo_v3(s, status, id, nullptr, nullptr, nullptr, nullptr);
    }
    CUresultAbi cuStreamGetCaptureInfo_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status,
                                            unsigned long long* id)
    {
        return cuStreamGetCaptureInfo(s, status, id);
    }

    CUresultAbi cuThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode)
    {
        return Driver(cudaThreadExchangeStreamCaptureMode(mode));
    }

    CUresultAbi cuGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                            unsigned long long flags)
    {
        return Driver(cudaGraphInstantiateWithFlags(exec, graph, flags));
    }

    CUresultAbi cuGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
    {
        return Driver(cudaGraphLaunch(exec, s));
    }
    CUresultAbi cuGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t s)
    {
        return cuGraphLaunch(exec, s);
    }

    CUresultAbi cuGraphUpload(cudaGraphExec_t exec, cudaStream_t s)
    {
        return Driver(cudaGraphUpload(exec, s));
    }
    CUresultAbi cuGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t s)
    {
        return cuGraphUpload(exec, s);
    }

    CUresultAbi cuGraphExecDestroy(cudaGraphExec_t exec)
    {
        return Driver(cudaGraphExecDestroy(exec));
    }

    CUresultAbi cuGraphDestroy(cudaGraph_t graph)
    {
        return Driver(cudaGraphDestroy(graph));
    }

    CUresultAbi cuGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count)
    {
        return Driver(cudaGraphGetNodes(graph, nodes, count));
    }

} // extern "C"
