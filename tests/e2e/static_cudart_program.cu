// Linked with the static CUDA runtime (nvcc's default): phantora-cluster must refuse it
// before starting a rank (tests/e2e/rank_failure_test.cc).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void Fill(float* x)
{
    x[threadIdx.x] = 1.0f;
}

int main()
{
    float* d = nullptr;
    if (cudaMalloc(&d, 32 * sizeof(float)) != cudaSuccess)
    {
        return 1;
    }
    Fill<<<1, 32>>>(d);
    std::printf("synchronised: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
