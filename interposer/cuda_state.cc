#include "cuda_state.h"

#include "id_allocator.h"
#include "protocol/streams.h"

namespace phantora::interposer
{

CudaThreadState& ThreadState()
{
    thread_local CudaThreadState state;
    return state;
}

uint64_t StreamId(cudaStream_t s)
{
    const auto v = reinterpret_cast<uintptr_t>(s);
    if (v == reinterpret_cast<uintptr_t>(cudaStreamPerThread))
    {
        thread_local const uint64_t mine = NewId(IdKind::PerThreadStream);
        return mine;
    }
    // 0 and cudaStreamLegacy are the legacy default stream
    return v <= 1 ? wire::kLegacyStream : static_cast<uint64_t>(v);
}

} // namespace phantora::interposer
