// Calls cudaGraphicsMapResources (graphics interop, which the simulator does not serve):
// the rank must end there, naming the call, instead of reaching the real runtime.
#include <cuda_runtime_api.h>

#include <cstdio>

int main()
{
    int n = 0;
    cudaGetDeviceCount(&n);
    cudaGraphicsResource_t resource = nullptr;
    const cudaError_t err = cudaGraphicsMapResources(1, &resource, nullptr);
    std::printf("after the call: %d\n", static_cast<int>(err));
    return 0;
}
