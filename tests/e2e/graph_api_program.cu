// A CUDA graph built with the explicit API (no capture): a memset, two kernels side by
// side, a copy after both, a host function, and external event record nodes around the
// kernels, so the graph times itself.  Prints the graph's shape, then per launch the
// events' elapsed time, and the host function's count.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK_CUDA(call)                                                                           \
    do                                                                                             \
    {                                                                                              \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
        {                                                                                          \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                      \
                         cudaGetErrorString(e_));                                                  \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

__global__ void phantora_api_left(float* x)
{
    x[threadIdx.x] += 1.0f;
}

__global__ void phantora_api_right(float* x)
{
    x[threadIdx.x] *= 2.0f;
}

namespace
{
std::atomic<int> g_calls{0};
void Count(void*)
{
    g_calls.fetch_add(1);
}
} // namespace

int main()
{
    constexpr int kLaunches = 3;
    float* x = nullptr;
    float* y = nullptr;
    CHECK_CUDA(cudaMalloc(&x, 4096));
    CHECK_CUDA(cudaMalloc(&y, 4096));
    cudaStream_t s = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));

    cudaGraph_t g = nullptr;
    CHECK_CUDA(cudaGraphCreate(&g, 0));
    cudaMemsetParams memset{};
    memset.dst = x;
    memset.value = 0;
    memset.elementSize = 4;
    memset.width = 1024;
    memset.height = 1;
    cudaGraphNode_t zero = nullptr;
    CHECK_CUDA(cudaGraphAddMemsetNode(&zero, g, nullptr, 0, &memset));
    cudaGraphNode_t begin = nullptr;
    CHECK_CUDA(cudaGraphAddEventRecordNode(&begin, g, &zero, 1, start));
    void* args[] = {&x};
    cudaKernelNodeParams k{};
    k.func = reinterpret_cast<void*>(phantora_api_left);
    k.gridDim = dim3(1);
    k.blockDim = dim3(256);
    k.kernelParams = args;
    cudaGraphNode_t left = nullptr;
    CHECK_CUDA(cudaGraphAddKernelNode(&left, g, &begin, 1, &k));
    k.func = reinterpret_cast<void*>(phantora_api_right);
    cudaGraphNode_t right = nullptr;
    CHECK_CUDA(cudaGraphAddKernelNode(&right, g, &begin, 1, &k));
    cudaGraphNode_t both[] = {left, right};
    cudaGraphNode_t end = nullptr;
    CHECK_CUDA(cudaGraphAddEventRecordNode(&end, g, both, 2, stop));
    cudaGraphNode_t copy = nullptr;
    CHECK_CUDA(cudaGraphAddMemcpyNode1D(&copy, g, &end, 1, y, x, 4096, cudaMemcpyDeviceToDevice));
    cudaHostNodeParams host{Count, nullptr};
    cudaGraphNode_t hostNode = nullptr;
    CHECK_CUDA(cudaGraphAddHostNode(&hostNode, g, &copy, 1, &host));

    size_t nodes = 0;
    size_t roots = 0;
    size_t deps = 0;
    CHECK_CUDA(cudaGraphGetNodes(g, nullptr, &nodes));
    CHECK_CUDA(cudaGraphGetRootNodes(g, nullptr, &roots));
    CHECK_CUDA(cudaGraphNodeGetDependencies(end, nullptr, nullptr, &deps));
    cudaGraphNodeType type{};
    CHECK_CUDA(cudaGraphNodeGetType(left, &type));
    std::printf("nodes %zu roots %zu end-deps %zu kernel-type %d\n", nodes, roots, deps,
                type == cudaGraphNodeTypeKernel ? 1 : 0);

    cudaGraphExec_t exec = nullptr;
    CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < kLaunches; ++i)
    {
        CHECK_CUDA(cudaGraphLaunch(exec, s));
        CHECK_CUDA(cudaStreamSynchronize(s));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        std::printf("launch %d kernels took %.3f us\n", i, ms * 1000.0);
    }
    std::printf("host node ran %d times\n", g_calls.load());
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(g));

    // A graph run as one node of another: added (cudaGraphAddChildGraphNode) and captured
    // (a graph launched into a stream being captured).  The child runs left then right.
    cudaGraph_t child = nullptr;
    CHECK_CUDA(cudaGraphCreate(&child, 0));
    k.func = reinterpret_cast<void*>(phantora_api_left);
    cudaGraphNode_t first = nullptr;
    CHECK_CUDA(cudaGraphAddKernelNode(&first, child, nullptr, 0, &k));
    k.func = reinterpret_cast<void*>(phantora_api_right);
    cudaGraphNode_t second = nullptr;
    CHECK_CUDA(cudaGraphAddKernelNode(&second, child, &first, 1, &k));
    cudaGraph_t parent = nullptr;
    CHECK_CUDA(cudaGraphCreate(&parent, 0));
    CHECK_CUDA(cudaGraphAddEventRecordNode(&begin, parent, nullptr, 0, start));
    cudaGraphNode_t childNode = nullptr;
    CHECK_CUDA(cudaGraphAddChildGraphNode(&childNode, parent, &begin, 1, child));
    CHECK_CUDA(cudaGraphAddEventRecordNode(&end, parent, &childNode, 1, stop));
    CHECK_CUDA(cudaGraphNodeGetType(childNode, &type));
    cudaGraphExec_t childExec = nullptr;
    CHECK_CUDA(cudaGraphInstantiate(&childExec, child, 0));
    CHECK_CUDA(cudaGraphInstantiate(&exec, parent, 0));
    CHECK_CUDA(cudaGraphLaunch(exec, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    std::printf("child graph node (type graph %d) took %.3f us\n",
                type == cudaGraphNodeTypeGraph ? 1 : 0, ms * 1000.0);
    CHECK_CUDA(cudaGraphExecDestroy(exec));

    cudaGraph_t captured = nullptr;
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK_CUDA(cudaEventRecordWithFlags(start, s, cudaEventRecordExternal));
    CHECK_CUDA(cudaGraphLaunch(childExec, s));
    CHECK_CUDA(cudaEventRecordWithFlags(stop, s, cudaEventRecordExternal));
    CHECK_CUDA(cudaStreamEndCapture(s, &captured));
    CHECK_CUDA(cudaGraphInstantiate(&exec, captured, 0));
    CHECK_CUDA(cudaGraphLaunch(exec, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    std::printf("graph launched into a capture took %.3f us\n", ms * 1000.0);
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphExecDestroy(childExec));
    CHECK_CUDA(cudaGraphDestroy(captured));
    CHECK_CUDA(cudaGraphDestroy(parent));
    CHECK_CUDA(cudaGraphDestroy(child));
    return g_calls.load() == kLaunches ? 0 : 1;
}
