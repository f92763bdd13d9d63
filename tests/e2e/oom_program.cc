// Allocates 256 MiB blocks until cudaMalloc refuses, then reports what it got,
// through the program's own error path, as a real program would.
#include <cstdio>
#include <cuda_runtime_api.h>

int main()
{
    constexpr size_t kBlock = size_t{256} << 20;
    void* last = nullptr;
    void* p = nullptr;
    int blocks = 0;
    cudaError_t err = cudaSuccess;
    while ((err = cudaMalloc(&p, kBlock)) == cudaSuccess)
    {
        last = p;
        ++blocks;
    }
    std::printf("allocated %d blocks of 256 MiB, then %s: %s\n", blocks, cudaGetErrorName(err),
                cudaGetErrorString(err));
    // the error stays until read, and reading clears it
    const int first = static_cast<int>(cudaGetLastError());
    const int second = static_cast<int>(cudaGetLastError());
    std::printf("last error %d, then %d\n", first, second);
    // freeing one block makes room for exactly one more
    cudaFree(last);
    const cudaError_t again = cudaMalloc(&p, kBlock);
    const cudaError_t more = cudaMalloc(&p, kBlock);
    std::printf("after a free: %s, then %s\n", cudaGetErrorName(again), cudaGetErrorName(more));
    return 0;
}
