// Per-thread CUDA runtime state the program can observe: the current device and
// the last error (cudaGetLastError / cudaPeekAtLastError semantics).
#pragma once

#include <cstdint>
#include <cuda_runtime_api.h>

namespace phantora::interposer
{

struct CudaThreadState
{
    int device{0};
    cudaError_t lastError{cudaSuccess};
};

CudaThreadState& ThreadState();

/// Records \p e as the thread's last error (when it is one) and returns it.
inline cudaError_t Status(cudaError_t e)
{
    if (e != cudaSuccess)
    {
        ThreadState().lastError = e;
    }
    return e;
}

/// The bridge's id of a stream handle (see protocol/streams.h).
uint64_t StreamId(cudaStream_t s);

} // namespace phantora::interposer
