// What a CUDA graph's launch costs on a real GPU, for [gpu] graph_node_gap (and to check
// launch_latency for graphs): chains of N empty kernels, captured into a graph and also
// issued directly, timed with CUDA events while a spin kernel holds the GPU (so the host
// is far ahead and only the GPU's own cost per op shows), and the host time of the
// cudaGraphLaunch call itself.  Least-squares lines over N give the GPU time per node in
// a graph and per kernel issued directly; their difference is what a graph changes in
// the gap between two ops, so graph_node_gap = stream_gap + (graph slope - direct slope).
//
// usage: phantora-bench-graph-launch-cost [REPS] [HOLD_CYCLES]  (on a real GPU; prints a table)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>
#include <sys/syscall.h>
#include <unistd.h>
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

__global__ void phantora_graph_bench_empty() {}

__global__ void phantora_graph_bench_spin(long long cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles)
    {
    }
}

namespace
{

double RealNowUs()
{
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

double Median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// Slope and intercept of the least-squares line through (x, y).
std::pair<double, double> Fit(const std::vector<double>& x, const std::vector<double>& y)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = static_cast<double>(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
    {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    return {slope, (sy - slope * sx) / n};
}

} // namespace

int main(int argc, char** argv)
{
    const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
    cudaStream_t s = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0 = nullptr;
    cudaEvent_t e1 = nullptr;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    cudaDeviceProp prop{};
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    // About 2 ms at Hopper's 1.98 GHz: longer than the host takes to queue 128 launches.
    const long long holdCycles = argc > 2 ? std::atoll(argv[2]) : 4000000;
    std::printf("device: %s, %d reps per point\n", prop.name, reps);
    std::printf("%6s %16s %16s %18s %18s\n", "nodes", "graph held us", "direct held us",
                "graph idle us", "launch call us");

    std::vector<double> xs, graphHeld, directHeld;
    for (int n : {1, 2, 4, 8, 16, 32, 64, 128})
    {
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < n; ++i)
        {
            phantora_graph_bench_empty<<<1, 32, 0, s>>>();
        }
        CHECK_CUDA(cudaStreamEndCapture(s, &graph));
        CHECK_CUDA(cudaGraphInstantiateWithFlags(&exec, graph, 0));
        CHECK_CUDA(cudaGraphUpload(exec, s));
        CHECK_CUDA(cudaGraphLaunch(exec, s)); // the first launch is not timed
        CHECK_CUDA(cudaStreamSynchronize(s));
        std::vector<double> held, direct, idle, call;
        float ms = 0;
        for (int r = 0; r < reps; ++r)
        {
            // Held: the nodes queue behind the spin kernel, the host far ahead.
            phantora_graph_bench_spin<<<1, 1, 0, s>>>(holdCycles);
            CHECK_CUDA(cudaEventRecord(e0, s));
            const double t0 = RealNowUs();
            CHECK_CUDA(cudaGraphLaunch(exec, s));
            call.push_back(RealNowUs() - t0);
            CHECK_CUDA(cudaEventRecord(e1, s));
            CHECK_CUDA(cudaEventSynchronize(e1));
            CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
            held.push_back(ms * 1e3);

            phantora_graph_bench_spin<<<1, 1, 0, s>>>(holdCycles);
            CHECK_CUDA(cudaEventRecord(e0, s));
            for (int i = 0; i < n; ++i)
            {
                phantora_graph_bench_empty<<<1, 32, 0, s>>>();
            }
            CHECK_CUDA(cudaEventRecord(e1, s));
            CHECK_CUDA(cudaEventSynchronize(e1));
            CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
            direct.push_back(ms * 1e3);

            // Idle: from a record on the idle stream through the graph (launch latency).
            CHECK_CUDA(cudaEventRecord(e0, s));
            CHECK_CUDA(cudaGraphLaunch(exec, s));
            CHECK_CUDA(cudaEventRecord(e1, s));
            CHECK_CUDA(cudaEventSynchronize(e1));
            CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
            idle.push_back(ms * 1e3);
        }
        std::printf("%6d %16.3f %16.3f %18.3f %18.3f\n", n, Median(held), Median(direct),
                    Median(idle), Median(call));
        xs.push_back(n);
        graphHeld.push_back(Median(held));
        directHeld.push_back(Median(direct));
        CHECK_CUDA(cudaGraphExecDestroy(exec));
        CHECK_CUDA(cudaGraphDestroy(graph));
    }
    const auto [graphSlope, graphBase] = Fit(xs, graphHeld);
    const auto [directSlope, directBase] = Fit(xs, directHeld);
    std::printf("per node in a graph: %.3f us (+%.3f us once); per kernel issued directly: %.3f us "
                "(+%.3f us once)\n",
                graphSlope, graphBase, directSlope, directBase);
    std::printf("graph_node_gap = stream_gap %+.3f us\n", graphSlope - directSlope);
    return 0;
}
