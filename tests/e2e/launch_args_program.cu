// One kernel launched at one launch shape with two row lengths, and one kernel with a
// parameter of every kind: what launch-argument keys (cuda_abi/kernel_params.h) must
// tell apart, and what the compiler's parameter layout looks like.
#include <cstdio>
#include <cuda_runtime.h>

struct Five
{
    int v[5];
};

__global__ void args_rows(float* x, int rows, int cols, float scale, char flag, long stride)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (flag && i < rows * cols)
    {
        x[(i * stride) % (rows * cols)] *= scale;
    }
}

__global__ void args_mixed(char c, short s, int i, long l, double d, float* p, Five f)
{
    if (p)
    {
        p[0] = static_cast<float>(c + s + i + l + d + f.v[4]);
    }
}

int main()
{
    float* x = nullptr;
    if (cudaMalloc(&x, 64 * 400 * sizeof(float)) != cudaSuccess)
    {
        std::fprintf(stderr, "cudaMalloc failed\n");
        return 1;
    }
    for (int cols : {100, 400, 100})
    {
        args_rows<<<64, 128>>>(x, 64, cols, 0.5f, 1, cols);
    }
    args_mixed<<<1, 32>>>(1, 2, 3, 4, 5.0, x, Five{{1, 2, 3, 4, 5}});
    const cudaError_t rc = cudaDeviceSynchronize();
    cudaFree(x);
    std::printf("launch_args: %s\n", cudaGetErrorString(rc));
    return rc == cudaSuccess ? 0 : 1;
}
