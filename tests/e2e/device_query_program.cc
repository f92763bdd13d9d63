// Prints what the CUDA runtime says about the device, the way frameworks ask.
#include <cstdio>
#include <cstring>
#include <cuda_runtime_api.h>

int main()
{
    int count = 0;
    cudaGetDeviceCount(&count);
    cudaSetDevice(count - 1);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, count - 1);
    int sms = 0;
    int major = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    std::printf("devices %d name '%s' memory %zu sms %d/%d cc %d.%d/%d\n", count, p.name,
                p.totalGlobalMem, p.multiProcessorCount, sms, p.major, p.minor, major);

    void* d = nullptr;
    cudaMalloc(&d, size_t{1} << 30);
    size_t freeBytes = 0;
    size_t total = 0;
    cudaMemGetInfo(&freeBytes, &total);
    std::printf("meminfo free %zu total %zu\n", freeBytes, total);

    void* pinned = nullptr;
    cudaMallocHost(&pinned, 4096);
    std::memset(pinned, 7, 4096); // real host memory
    cudaPointerAttributes a{};
    cudaPointerAttributes b{};
    cudaPointerGetAttributes(&a, d);
    cudaPointerGetAttributes(&b, pinned);
    int device = -1;
    cudaGetDevice(&device);
    std::printf("pointer types %d %d device %d current %d\n", static_cast<int>(a.type),
                static_cast<int>(b.type), a.device, device);
    int peer = 0;
    cudaDeviceCanAccessPeer(&peer, 0, count - 1);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusActive;
    cudaStreamIsCapturing(nullptr, &capture);
    std::printf("peer %d capturing %d\n", peer, static_cast<int>(capture));
    cudaFreeHost(pinned);
    cudaFree(d);
    return 0;
}
