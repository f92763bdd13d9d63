// Interposer overhead per kernel launch: launches many empty kernels and times
// them with the host's real clock (a raw system call, which the interposer does
// not answer with simulated time).  Prints the median and the 90th percentile of
// the per-launch cost over batches: for a kernel without parameters, and for one with
// a pointer and three scalars, whose values the interposer reads for the profile key.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

__global__ void phantora_empty_kernel() {}
__global__ void phantora_scalars_kernel(float*, int, long, float) {}

namespace
{

double RealNowUs()
{
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

} // namespace

int main(int argc, char** argv)
{
    const int batches = argc > 1 ? std::atoi(argv[1]) : 200;
    const int perBatch = argc > 2 ? std::atoi(argv[2]) : 500;
    cudaStream_t stream = nullptr;
    if (cudaStreamCreate(&stream) != cudaSuccess)
    {
        std::fprintf(stderr, "cudaStreamCreate failed\n");
        return 1;
    }
    auto measure = [&](const char* what, auto launch)
    {
        std::vector<double> perLaunchUs;
        for (int b = 0; b < batches; ++b)
        {
            const double t0 = RealNowUs();
            for (int i = 0; i < perBatch; ++i)
            {
                launch(i);
            }
            perLaunchUs.push_back((RealNowUs() - t0) / perBatch);
        }
        cudaStreamSynchronize(stream);
        std::sort(perLaunchUs.begin(), perLaunchUs.end());
        std::printf(
            "launch overhead%s: median %.3f us, p90 %.3f us per launch (%d batches of %d)\n", what,
            perLaunchUs[perLaunchUs.size() / 2], perLaunchUs[perLaunchUs.size() * 9 / 10], batches,
            perBatch);
    };
    measure("", [&](int) { phantora_empty_kernel<<<1, 32, 0, stream>>>(); });
    measure(" (4 arguments)",
            [&](int i) { phantora_scalars_kernel<<<1, 32, 0, stream>>>(nullptr, i, 4096, 0.5f); });
    return 0;
}
