// Host functions on a stream: kernel A, a host function (cudaLaunchHostFunc) that
// reads the simulated clock and sleeps, kernel B, a callback
// (cudaStreamAddCallback), kernel C.  Prints when each host function started, how
// long the stream took, and the order things ran in.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <unistd.h>

__global__ void hostfn_a(float*) {}
__global__ void hostfn_b(float*) {}
__global__ void hostfn_c(float*) {}

namespace
{

double NowUs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Written by the runtime's host-function thread, read by main after the stream is done.
std::atomic<int> g_order{0};
double g_t0 = 0;
std::atomic<double> g_firstAt{-1};
std::atomic<double> g_secondAt{-1};
std::atomic<int> g_firstOrder{-1};
std::atomic<int> g_secondOrder{-1};

void CUDART_CB First(void*)
{
    g_firstAt = NowUs() - g_t0;
    g_firstOrder = g_order++;
    usleep(50); // 50 us of simulated host time before the stream may go on
}

void CUDART_CB Second(cudaStream_t, cudaError_t status, void*)
{
    g_secondAt = NowUs() - g_t0;
    g_secondOrder = status == cudaSuccess ? g_order++ : -100;
}

} // namespace

int main()
{
    cudaSetDevice(std::atoi(std::getenv("LOCAL_RANK")));
    float* buf = nullptr;
    cudaMalloc(&buf, 1024);
    cudaStream_t s = nullptr;
    cudaStreamCreate(&s);
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
    cudaEventCreate(&start);
    cudaEventCreate(&end);
    cudaDeviceSynchronize();
    g_t0 = NowUs();
    cudaEventRecord(start, s);
    hostfn_a<<<1, 32, 0, s>>>(buf);
    if (cudaLaunchHostFunc(s, First, nullptr) != cudaSuccess)
    {
        return 1;
    }
    hostfn_b<<<1, 32, 0, s>>>(buf);
    if (cudaStreamAddCallback(s, Second, nullptr, 0) != cudaSuccess)
    {
        return 1;
    }
    hostfn_c<<<1, 32, 0, s>>>(buf);
    cudaEventRecord(end, s);
    cudaStreamSynchronize(s);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, end);
    std::printf("first host function at %.3f us (order %d)\n", g_firstAt.load(),
                g_firstOrder.load());
    std::printf("second host function at %.3f us (order %d)\n", g_secondAt.load(),
                g_secondOrder.load());
    std::printf("stream took %.3f us\n", static_cast<double>(ms) * 1000.0);
    return 0;
}
