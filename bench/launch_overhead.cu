// Interposer overhead per kernel launch: launches many empty kernels and times
// them with the host's real clock (a raw system call, which the interposer does
// not answer with simulated time).  Prints the median and the 90th percentile of
// the per-launch cost over batches.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

__global__ void phantora_empty_kernel() {}

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
    std::vector<double> perLaunchUs;
    for (int b = 0; b < batches; ++b)
    {
        const double t0 = RealNowUs();
        for (int i = 0; i < perBatch; ++i)
        {
            phantora_empty_kernel<<<1, 32, 0, stream>>>();
        }
        perLaunchUs.push_back((RealNowUs() - t0) / perBatch);
    }
    cudaStreamSynchronize(stream);
    std::sort(perLaunchUs.begin(), perLaunchUs.end());
    std::printf("launch overhead: median %.3f us, p90 %.3f us per launch (%d batches of %d)\n",
                perLaunchUs[perLaunchUs.size() / 2], perLaunchUs[perLaunchUs.size() * 9 / 10],
                batches, perBatch);
    return 0;
}
