// A program whose host work between GPU calls takes a different amount of real CPU time
// on every run: a random busy loop before each launch.  With the host time recorded in
// the profile (tests/e2e/host_time_test.cc), its simulated steps must not depend on it.
//   host_time_program STEPS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <random>
#include <time.h>

__global__ void first_kernel(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void second_kernel(float* x) { x[threadIdx.x] *= 2.0f; }

namespace
{

/// Up to ~2 ms of real CPU work, a different amount every call and every run.
void BusyWork(std::mt19937_64& rng)
{
    const auto n = rng() % 2'000'000;
    volatile unsigned long long acc = 0;
    for (unsigned long long i = 0; i < n; ++i)
    {
        acc = acc + i * 2654435761ull;
    }
}

long long NowNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

} // namespace

int main(int argc, char** argv)
{
    const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
    std::mt19937_64 rng(std::random_device{}() ^
                        static_cast<unsigned long long>(
                            std::chrono::steady_clock::now().time_since_epoch().count()));
    float* x = nullptr;
    cudaMalloc(&x, 256 * sizeof(float));
    for (int step = 0; step < steps; ++step)
    {
        const long long t0 = NowNs();
        BusyWork(rng);
        first_kernel<<<1, 256>>>(x);
        BusyWork(rng);
        second_kernel<<<1, 256>>>(x);
        BusyWork(rng);
        cudaDeviceSynchronize();
        const long long t1 = NowNs();
        std::printf("rank 0 step %d time %.3f us\n", step, (t1 - t0) / 1e3);
    }
    cudaFree(x);
    return 0;
}
