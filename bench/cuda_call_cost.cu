// Host time of CUDA runtime calls on a real GPU, per call: what a scenario's
// `[cpu] call_overhead` (calls that submit GPU work: launches, copies, memsets) and
// `query_overhead` (every other call: device, error and capture queries, event
// records, stream waits) stand for.  Run on the GPU machine; under the simulator the
// same program shows what the scenario charges (tests/e2e/call_overhead_test.cc).
//
//   phantora-bench-cuda-call-cost [calls per figure, default 20000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <functional>
#include <vector>

namespace
{

__global__ void Empty() {}

/// Median over 7 rounds of the mean host time per call of \p call, in ns (at least
/// \p calls calls per round, whole batches).  Launch-like
/// calls are synchronised every \p batch calls (outside the timing) so the launch queue
/// never fills and blocks.
double NsPerCall(int calls, int batch, const std::function<void()>& call)
{
    std::vector<double> rounds;
    for (int round = 0; round < 7; ++round)
    {
        double ns = 0;
        int done = 0;
        for (; done < calls; done += batch)
        {
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < batch; ++i)
            {
                call();
            }
            const auto t1 = std::chrono::steady_clock::now();
            ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
            cudaDeviceSynchronize();
        }
        rounds.push_back(ns / done);
    }
    std::sort(rounds.begin(), rounds.end());
    return rounds[rounds.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEvent_t e = nullptr;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    void* a = nullptr;
    void* b = nullptr;
    cudaMalloc(&a, 4096);
    cudaMalloc(&b, 4096);
    Empty<<<1, 1, 0, s>>>(); // load the module
    cudaDeviceSynchronize();

    int device = 0;
    cudaStreamCaptureStatus capture{};
    const struct
    {
        const char* kind;
        const char* name;
        int batch;
        std::function<void()> call;
    } figures[] = {
        {"work", "cudaLaunchKernel", 256, [&] { Empty<<<1, 1, 0, s>>>(); }},
        {"work", "cudaMemcpyAsync DtoD 4 KiB", 256,
         [&] { cudaMemcpyAsync(b, a, 4096, cudaMemcpyDeviceToDevice, s); }},
        {"work", "cudaMemsetAsync 4 KiB", 256, [&] { cudaMemsetAsync(a, 0, 4096, s); }},
        {"other", "cudaEventRecord", 256, [&] { cudaEventRecord(e, s); }},
        {"other", "cudaStreamWaitEvent", 256, [&] { cudaStreamWaitEvent(s, e, 0); }},
        {"other", "cudaGetDevice", 1024, [&] { cudaGetDevice(&device); }},
        {"other", "cudaSetDevice (same device)", 1024, [&] { cudaSetDevice(device); }},
        {"other", "cudaGetLastError", 1024, [&] { (void)cudaGetLastError(); }},
        {"other", "cudaStreamGetCaptureInfo", 1024, [&] { cudaStreamGetCaptureInfo(s, &capture); }},
        {"other", "cudaStreamIsCapturing", 1024, [&] { cudaStreamIsCapturing(s, &capture); }},
    };
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    std::printf("device: %s, %d calls per figure, median of 7 rounds\n", prop.name, calls);
    std::printf("%-8s %-32s %10s\n", "kind", "call", "ns/call");
    for (const auto& f : figures)
    {
        std::printf("%-8s %-32s %10.1f\n", f.kind, f.name, NsPerCall(calls, f.batch, f.call));
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
