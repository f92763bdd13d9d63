// Calls cudaEventCreate, which the interposer does not implement (yet): the rank
// must end there, naming the call, instead of reaching the real runtime.
#include <cuda_runtime_api.h>

#include <cstdio>

int main()
{
    int n = 0;
    cudaGetDeviceCount(&n);
    cudaEvent_t e;
    const cudaError_t err = cudaEventCreate(&e);
    std::printf("after the call: %d\n", static_cast<int>(err));
    return 0;
}
