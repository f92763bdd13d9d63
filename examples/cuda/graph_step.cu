// A training-step-shaped CUDA graph in plain CUDA C++: captured once from two streams,
// then launched every step.  The capture holds a host-to-device copy (the batch), a
// kernel (the "forward"), a fork to a second stream for a kernel beside it (the
// "side branch", joined back through an event), a last kernel (the "update") and a
// host function.  Each step launches the graph and times it with CUDA events on the
// launch stream; on a real GPU and under phantora-cluster alike it prints one line per
// step ("rank R step S time T us") and the graph's node count.
//
// usage: phantora-cuda-graph-step [STEPS] [--eager]
//   --eager: issue the same work directly each step instead (for comparison)
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

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

__global__ void phantora_graph_forward(float* x, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    {
        x[i] = x[i] * 2.0f + 1.0f;
    }
}

__global__ void phantora_graph_side(float* y, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    {
        y[i] = y[i] * 0.5f;
    }
}

__global__ void phantora_graph_update(float* x, const float* y, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    {
        x[i] += y[i];
    }
}

namespace
{

constexpr size_t kElems = 1 << 18; // 1 MiB of floats
std::atomic<int> g_hostCalls{0};

void CountStep(void*)
{
    g_hostCalls.fetch_add(1);
}

/// The step's work on \p main, with the side branch forked to \p side.
void IssueStep(cudaStream_t main, cudaStream_t side, cudaEvent_t fork, cudaEvent_t join, float* x,
               float* y, const float* host)
{
    CHECK_CUDA(cudaMemcpyAsync(x, host, kElems * sizeof(float), cudaMemcpyHostToDevice, main));
    phantora_graph_forward<<<256, 256, 0, main>>>(x, kElems);
    CHECK_CUDA(cudaEventRecord(fork, main));
    CHECK_CUDA(cudaStreamWaitEvent(side, fork, 0));
    phantora_graph_side<<<128, 256, 0, side>>>(y, kElems);
    CHECK_CUDA(cudaEventRecord(join, side));
    CHECK_CUDA(cudaStreamWaitEvent(main, join, 0));
    phantora_graph_update<<<256, 256, 0, main>>>(x, y, kElems);
    CHECK_CUDA(cudaLaunchHostFunc(main, CountStep, nullptr));
}

} // namespace

int main(int argc, char** argv)
{
    int steps = 5;
    bool eager = false;
    for (int i = 1; i < argc; ++i)
    {
        if (std::strcmp(argv[i], "--eager") == 0)
        {
            eager = true;
        }
        else
        {
            steps = std::atoi(argv[i]);
        }
    }
    const char* rankEnv = std::getenv("RANK");
    const int rank = rankEnv ? std::atoi(rankEnv) : 0;

    float* x = nullptr;
    float* y = nullptr;
    CHECK_CUDA(cudaMalloc(&x, kElems * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&y, kElems * sizeof(float)));
    std::vector<float> host(kElems, 1.0f);
    cudaStream_t main = nullptr;
    cudaStream_t side = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t fork = nullptr;
    cudaEvent_t join = nullptr;
    CHECK_CUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));

    cudaGraphExec_t exec = nullptr;
    if (!eager)
    {
        cudaGraph_t graph = nullptr;
        CHECK_CUDA(cudaStreamBeginCapture(main, cudaStreamCaptureModeGlobal));
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        CHECK_CUDA(cudaStreamIsCapturing(main, &status));
        if (status != cudaStreamCaptureStatusActive)
        {
            std::fprintf(stderr, "the stream is not capturing after cudaStreamBeginCapture\n");
            return 1;
        }
        IssueStep(main, side, fork, join, x, y, host.data());
        CHECK_CUDA(cudaStreamEndCapture(main, &graph));
        size_t nodes = 0;
        CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
        std::printf("rank %d graph nodes %zu\n", rank, nodes);
        CHECK_CUDA(cudaGraphInstantiateWithFlags(&exec, graph, 0));
        CHECK_CUDA(cudaGraphDestroy(graph)); // the executable graph keeps what it needs
        CHECK_CUDA(cudaGraphUpload(exec, main));
    }
    for (int step = 0; step < steps; ++step)
    {
        CHECK_CUDA(cudaEventRecord(start, main));
        if (eager)
        {
            IssueStep(main, side, fork, join, x, y, host.data());
        }
        else
        {
            CHECK_CUDA(cudaGraphLaunch(exec, main));
        }
        CHECK_CUDA(cudaEventRecord(stop, main));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        std::printf("rank %d step %d time %.3f us\n", rank, step, ms * 1000.0);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    std::printf("rank %d host functions run %d of %d steps\n", rank, g_hostCalls.load(), steps);
    if (exec)
    {
        CHECK_CUDA(cudaGraphExecDestroy(exec));
    }
    return g_hostCalls.load() == steps ? 0 : 1;
}
