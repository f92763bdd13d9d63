// Calls cudaGraphCreate, which the interposer does not implement (yet): the rank
// must end there, naming the call, instead of reaching the real runtime.
#include <cuda_runtime_api.h>

#include <cstdio>

int main()
{
    int n = 0;
    cudaGetDeviceCount(&n);
    cudaGraph_t graph;
    const cudaError_t err = cudaGraphCreate(&graph, 0);
    std::printf("after the call: %d\n", static_cast<int>(err));
    return 0;
}
