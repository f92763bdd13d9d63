// Pitched, peer, symbol and 2D-memset copies against their plain equivalents: each is
// timed with events on one stream and printed, and the host bytes a 2D device-to-host
// copy writes are checked row by row.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

__device__ float g_table[4096];

namespace
{

cudaStream_t g_stream;
cudaEvent_t g_start;
cudaEvent_t g_stop;

template <class Fn> void Timed(const char* name, Fn&& fn)
{
    cudaEventRecord(g_start, g_stream);
    const cudaError_t e = fn();
    cudaEventRecord(g_stop, g_stream);
    cudaEventSynchronize(g_stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, g_start, g_stop);
    std::printf("copy %s status %d time %.3f us\n", name, static_cast<int>(e), ms * 1e3);
}

} // namespace

int main()
{
    constexpr size_t kWidth = 3000;
    constexpr size_t kHeight = 512;
    constexpr size_t kPitch = 4096;
    cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking);
    cudaEventCreate(&g_start);
    cudaEventCreate(&g_stop);
    void* dev = nullptr;
    void* dev2 = nullptr;
    cudaMalloc(&dev, kPitch * kHeight);
    cudaMalloc(&dev2, kPitch * kHeight);
    std::vector<unsigned char> host(kPitch * kHeight, 0xab);

    Timed("h2d-plain",
          [&] {
              return cudaMemcpyAsync(dev, host.data(), kWidth * kHeight, cudaMemcpyHostToDevice,
                                     g_stream);
          });
    Timed("h2d-2d",
          [&]
          {
              return cudaMemcpy2DAsync(dev, kPitch, host.data(), kPitch, kWidth, kHeight,
                                       cudaMemcpyHostToDevice, g_stream);
          });
    Timed("d2h-plain",
          [&] {
              return cudaMemcpyAsync(host.data(), dev, kWidth * kHeight, cudaMemcpyDeviceToHost,
                                     g_stream);
          });
    std::memset(host.data(), 0xab, host.size());
    Timed("d2h-2d",
          [&]
          {
              return cudaMemcpy2DAsync(host.data(), kPitch, dev, kPitch, kWidth, kHeight,
                                       cudaMemcpyDeviceToHost, g_stream);
          });
    // Row r: bytes [0, width) written (zeros: device data is not materialised), the pitch
    // padding [width, pitch) left alone.
    bool rowsRight = true;
    for (size_t r = 0; r < kHeight; ++r)
    {
        rowsRight = rowsRight && host[r * kPitch] == 0 && host[r * kPitch + kWidth - 1] == 0 &&
                    host[r * kPitch + kWidth] == 0xab && host[r * kPitch + kPitch - 1] == 0xab;
    }
    std::printf("d2h-2d rows %s\n", rowsRight ? "right" : "wrong");
    Timed("d2d-plain",
          [&] {
              return cudaMemcpyAsync(dev2, dev, kWidth * kHeight, cudaMemcpyDeviceToDevice,
                                     g_stream);
          });
    Timed("d2d-peer",
          [&] { return cudaMemcpyPeerAsync(dev2, 0, dev, 0, kWidth * kHeight, g_stream); });
    Timed("memset-plain", [&] { return cudaMemsetAsync(dev, 0, kWidth * kHeight, g_stream); });
    Timed("memset-2d",
          [&] { return cudaMemset2DAsync(dev, kPitch, 0, kWidth, kHeight, g_stream); });
    Timed("h2d-symbol-plain",
          [&] {
              return cudaMemcpyAsync(dev, host.data(), sizeof g_table, cudaMemcpyHostToDevice,
                                     g_stream);
          });
    Timed("h2d-symbol",
          [&]
          {
              return cudaMemcpyToSymbolAsync(g_table, host.data(), sizeof g_table, 0,
                                             cudaMemcpyHostToDevice, g_stream);
          });
    Timed("d2h-symbol-plain",
          [&] {
              return cudaMemcpyAsync(host.data(), dev, sizeof g_table, cudaMemcpyDeviceToHost,
                                     g_stream);
          });
    Timed("d2h-symbol",
          [&]
          {
              return cudaMemcpyFromSymbolAsync(host.data(), g_table, sizeof g_table, 0,
                                               cudaMemcpyDeviceToHost, g_stream);
          });
    Timed("bad-pitch",
          [&]
          {
              return cudaMemcpy2DAsync(dev, 16, host.data(), kPitch, kWidth, kHeight,
                                       cudaMemcpyHostToDevice, g_stream);
          });
    cudaFree(dev);
    cudaFree(dev2);
    return 0;
}
