// A program that steers by values it reads back from the GPU, as a training loop's
// gradient clipping does: a kernel computes a "norm", the host reads it and launches the
// clipping kernel only when it exceeds 1; it also reads back an integer count, and a value
// it wrote itself.  In simulation kernels compute nothing, so without recorded read-back
// values the norm reads 0 and the branch is never taken (tests/e2e/readback_test.cc).
//   readback_program STEPS
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void norm_kernel(float* norm)
{
    *norm = 2.5f;
}
__global__ void clip_kernel(float* norm)
{
    *norm = 1.0f;
}
__global__ void count_kernel(int* count)
{
    *count = 7;
}

int main(int argc, char** argv)
{
    const int steps = argc > 1 ? std::atoi(argv[1]) : 3;
    float* norm = nullptr;
    int* count = nullptr;
    float* own = nullptr;
    cudaMalloc(&norm, sizeof(float));
    cudaMalloc(&count, sizeof(int));
    cudaMalloc(&own, sizeof(float));
    for (int step = 0; step < steps; ++step)
    {
        norm_kernel<<<1, 1>>>(norm);
        float n = 0;
        cudaMemcpy(&n, norm, sizeof n, cudaMemcpyDeviceToHost);
        const bool clipped = n > 1.0f;
        if (clipped)
        {
            clip_kernel<<<1, 1>>>(norm);
        }
        count_kernel<<<1, 1>>>(count);
        int c = 0;
        cudaMemcpyAsync(&c, count, sizeof c, cudaMemcpyDeviceToHost, nullptr);
        cudaStreamSynchronize(nullptr);
        const float mine = 0.5f;
        cudaMemcpy(own, &mine, sizeof mine, cudaMemcpyHostToDevice);
        float back = 0;
        cudaMemcpy(&back, own, sizeof back, cudaMemcpyDeviceToHost);
        cudaDeviceSynchronize();
        std::printf("step %d norm %g clipped %d count %d own %g\n", step, n, clipped ? 1 : 0, c,
                    back);
    }
    cudaFree(norm);
    cudaFree(count);
    cudaFree(own);
    return 0;
}
