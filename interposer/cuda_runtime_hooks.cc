// The CUDA runtime API as the program sees it, answered without a driver: device
// queries from the scenario, memory from DeviceMemory, GPU work and waits from the
// bridge's timeline.
#include "cuda_state.h"
#include "device_memory.h"
#include "device_query_scope.h"
#include "hook_scope.h"
#include "host_time.h"
#include "host_time/host_boundary.h"
#include "id_allocator.h"
#include "kernel_launch.h"
#include "kernel_registry.h"
#include "kernel_values.h"
#include "pinned_host_memory.h"
#include "protocol/streams.h"
#include "real_function.h"
#include "stream_capture.h"
#include "value_shadow.h"

#include <cstring>
#include <cuda_runtime_api.h>
#include <vector>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

wire::CopyKind CopyKindOf(const void* dst, const void* src, cudaMemcpyKind kind)
{
    if (kind == cudaMemcpyDefault)
    {
        const bool d = DeviceMemory::Get().Contains(dst);
        const bool s = DeviceMemory::Get().Contains(src);
        kind = d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                 : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    }
    switch (kind)
    {
    case cudaMemcpyHostToHost:
        return wire::CopyKind::HostToHost;
    case cudaMemcpyHostToDevice:
        return wire::CopyKind::HostToDevice;
    case cudaMemcpyDeviceToHost:
        return wire::CopyKind::DeviceToHost;
    default:
        return wire::CopyKind::DeviceToDevice;
    }
}

/// A copy of \p count bytes from \p src to \p dst, a host copy marked where its host side
/// is pinned memory (pinned_host_memory.h).
wire::Memcpy CopyOf(uint64_t stream, wire::CopyKind k, uint64_t count, bool blocking,
                    const void* dst, const void* src)
{
    wire::Memcpy m;
    m.stream = stream;
    m.kind = k;
    m.bytes = count;
    m.blocking = blocking;
    m.pinnedHost = (k == wire::CopyKind::HostToDevice && PinnedHostMemory::Get().Contains(src)) ||
                   (k == wire::CopyKind::DeviceToHost && PinnedHostMemory::Get().Contains(dst));
    return m;
}

uint64_t Addr(const void* p)
{
    return reinterpret_cast<uintptr_t>(p);
}

/// Host memory a copy writes gets the device bytes the value shadow knows and zeros
/// elsewhere (device data is never materialised); small copies to the device keep
/// their bytes in the shadow (see value_shadow.h).  A device-to-host copy the shadow
/// knows nothing of, made by boundary call \p what (cudaMemcpy's and cudaMemcpyAsync's;
/// null: another call), returns the value the recording read there if it holds one
/// (host_time.h, ServeRecordedRead): the shadow's values (the program's own bytes,
/// moe_routing's) come first.
void WriteHostSide(void* dst, const void* src, size_t count, wire::CopyKind kind,
                   const char* what = nullptr)
{
    switch (kind)
    {
    case wire::CopyKind::DeviceToHost:
        if (!ValueShadow::Get().Read(dst, Addr(src), count, BridgeFetch()) && what)
        {
            HostTime::Get().ServeRecordedRead(what, dst, count);
        }
        break;
    case wire::CopyKind::HostToHost:
        std::memmove(dst, src, count);
        break;
    case wire::CopyKind::HostToDevice:
        ValueShadow::Get().Write(Addr(dst), src, count);
        break;
    case wire::CopyKind::DeviceToDevice:
        ValueShadow::Get().Copy(Addr(dst), Addr(src), count, BridgeFetch());
        break;
    case wire::CopyKind::Memset:
        break;
    }
}

/// A memset of \p count bytes to \p value at \p dst, in the value shadow.
void ShadowMemset(void* dst, int value, size_t count)
{
    if (count > ValueShadow::kMaxBytes)
    {
        ValueShadow::Get().Forget(Addr(dst), count);
        return;
    }
    const std::string bytes(count, static_cast<char>(value));
    ValueShadow::Get().Write(Addr(dst), bytes.data(), count);
}

/// A pitched copy: rows through the shadow when the whole is small, else the device
/// side forgets what it knew and the host side reads zeros.
void WritePitched(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                  size_t height, wire::CopyKind kind)
{
    const bool small = width * height <= ValueShadow::kMaxBytes;
    for (size_t row = 0; row < height; ++row)
    {
        char* d = static_cast<char*>(dst) + row * dpitch;
        const char* s = static_cast<const char*>(src) + row * spitch;
        if (small || kind == wire::CopyKind::HostToHost)
        {
            WriteHostSide(d, s, width, kind);
        }
        else if (kind == wire::CopyKind::DeviceToHost)
        {
            std::memset(d, 0, width);
        }
    }
    if (!small &&
        (kind == wire::CopyKind::HostToDevice || kind == wire::CopyKind::DeviceToDevice) &&
        height > 0)
    {
        ValueShadow::Get().Forget(Addr(dst), dpitch * (height - 1) + width);
    }
}

void WaitFor(const HookScope& scope, wire::Request req)
{
    wire::Reply reply = scope.Client().Call(std::move(req));
    if (auto* r = std::get_if<wire::Resume>(&reply))
    {
        SimClock::Get().AdvanceTo(r->clockNs);
    }
}

/// A kernel writes through the parameters its signature says are outputs
/// (kernel_signature.h): the value shadow forgets what each such address holds
/// (value_shadow.h).  A kernel whose layout or name is unknown forgets nothing.
void ForgetWhatItWrites(const void* func, void* const* args)
{
    if (!args)
    {
        return;
    }
    const kernel_args::ParamLayout* layout = KernelRegistry::Get().Layout(func);
    if (!layout)
    {
        return;
    }
    const std::vector<ParamWrites>& writes = KernelRegistry::Get().WrittenParams(func);
    std::vector<uint64_t> addresses;
    for (std::size_t i = 0; i < writes.size() && i < layout->size(); ++i)
    {
        const uint32_t size = (*layout)[i].size;
        if (writes[i] == ParamWrites::Nothing || size < sizeof(uint64_t) || !args[i])
        {
            continue;
        }
        const char* value = static_cast<const char*>(args[i]);
        if (writes[i] == ParamWrites::First)
        {
            uint64_t address = 0;
            std::memcpy(&address, value, sizeof address);
            addresses.push_back(address);
            continue;
        }
        // A pointer inside a struct sits at a multiple of 8 from its start; sizes,
        // strides and magic numbers never fall in device memory.
        bool source = true;
        for (uint32_t at = 0; at + sizeof(uint64_t) <= size; at += sizeof(uint64_t))
        {
            uint64_t word = 0;
            std::memcpy(&word, value + at, sizeof word);
            if (DeviceMemory::Get().Contains(reinterpret_cast<const void*>(word)))
            {
                if (!source)
                {
                    addresses.push_back(word);
                }
                source = false;
            }
        }
    }
    ValueShadow::Get().MayWrite(addresses.data(), addresses.size());
}

} // namespace

namespace phantora::interposer
{

cudaError_t LaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t sharedMem,
                         cudaStream_t stream, RankClient::Gap gap)
{
    HookScope scope;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0 ||
        static_cast<uint64_t>(block.x) * block.y * block.z > 1024)
    {
        return Status(cudaErrorInvalidConfiguration);
    }
    wire::KernelLaunch k;
    k.stream = StreamId(stream);
    k.name = KernelRegistry::Get().Name(func);
    if (k.name.size() > wire::kMaxStringBytes)
    {
        k.name.resize(wire::kMaxStringBytes); // still unique enough to key a duration
    }
    k.grid = {grid.x, grid.y, grid.z};
    k.block = {block.x, block.y, block.z};
    k.sharedMem = static_cast<uint32_t>(sharedMem);
    k.args = KernelRegistry::Get().ArgFacts(func, args);
    k.work = KernelRegistry::Get().WorkFacts(func, args, grid.x * grid.y * grid.z);
    if (!ComputeKnownOutputs(k.name, KernelRegistry::Get().Layout(func), args))
    {
        ForgetWhatItWrites(func, args);
    }
    if (k.args.size() > wire::kMaxStringBytes)
    {
        k.args.clear(); // a key no recording could have: the launch shape alone keys it
    }
    scope.Client().Post(std::move(k), gap);
    return cudaSuccess;
}

} // namespace phantora::interposer

extern "C"
{

    cudaError_t cudaGetDeviceCount(int* count)
    {
        if (const int without = RankClient::DeviceCountWithoutRank(); count && without >= 0)
        {
            // torchrun's agent asks torch.cuda.is_available() (for NUMA binding), and so do
            // modules the fork server imports; a HookScope would connect
            *count = without;
            return without > 0 ? cudaSuccess : cudaErrorNoDevice;
        }
        DeviceQueryScope scope;
        if (!count)
        {
            return Status(cudaErrorInvalidValue);
        }
        *count = scope.Device().deviceCount;
        return cudaSuccess;
    }

    cudaError_t cudaSetDevice(int device)
    {
        DeviceQueryScope scope; // the calling thread's state only: a helper may choose one
        if (device < 0 || device >= scope.Device().deviceCount)
        {
            return Status(cudaErrorInvalidDevice);
        }
        ThreadState().device = device;
        return cudaSuccess;
    }

    cudaError_t cudaGetDevice(int* device)
    {
        DeviceQueryScope scope;
        if (!device)
        {
            return Status(cudaErrorInvalidValue);
        }
        *device = ThreadState().device;
        return cudaSuccess;
    }

    cudaError_t cudaMalloc(void** devPtr, size_t size)
    {
        HookScope scope;
        if (!devPtr)
        {
            return Status(cudaErrorInvalidValue);
        }
        if (StreamCapture::Get().ForbidsUnsafeCall("cudaMalloc"))
        {
            return Status(cudaErrorStreamCaptureUnsupported);
        }
        *devPtr = DeviceMemory::Get().Allocate(size);
        return *devPtr ? cudaSuccess : Status(cudaErrorMemoryAllocation);
    }

    cudaError_t cudaFree(void* devPtr)
    {
        HookScope scope;
        if (!devPtr)
        {
            return cudaSuccess;
        }
        if (StreamCapture::Get().ForbidsUnsafeCall("cudaFree"))
        {
            return Status(cudaErrorStreamCaptureUnsupported);
        }
        uintptr_t base = 0;
        std::size_t size = 0;
        if (DeviceMemory::Get().Range(devPtr, base, size) && base == Addr(devPtr))
        {
            // a later allocation at this address must not read these bytes
            ValueShadow::Get().Forget(base, size);
        }
        return DeviceMemory::Get().Free(devPtr) ? cudaSuccess : Status(cudaErrorInvalidValue);
    }

    cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind)
    {
        HookScope scope;
        if (StreamCapture::Get().ForbidsUnsafeCall("cudaMemcpy"))
        {
            return Status(cudaErrorStreamCaptureUnsupported);
        }
        const wire::CopyKind k = CopyKindOf(dst, src, kind);
        WriteHostSide(dst, src, count, k, host_time::boundary::kCopySync);
        WaitFor(scope, CopyOf(0, k, count, true, dst, src));
        return cudaSuccess;
    }

    cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                cudaStream_t stream)
    {
        HookScope scope;
        const wire::CopyKind k = CopyKindOf(dst, src, kind);
        WriteHostSide(dst, src, count, k, host_time::boundary::kCopyAsync);
        scope.Client().Post(CopyOf(StreamId(stream), k, count, false, dst, src));
        return cudaSuccess;
    }

    cudaError_t cudaMemset(void* devPtr, int value, size_t count)
    {
        HookScope scope;
        if (!DeviceMemory::Get().Contains(devPtr))
        {
            return Status(cudaErrorInvalidValue);
        }
        ShadowMemset(devPtr, value, count);
        scope.Client().Post(wire::Memcpy{0, wire::CopyKind::Memset, count, false});
        return cudaSuccess;
    }

    cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream)
    {
        HookScope scope;
        if (!DeviceMemory::Get().Contains(devPtr))
        {
            return Status(cudaErrorInvalidValue);
        }
        ShadowMemset(devPtr, value, count);
        scope.Client().Post(wire::Memcpy{StreamId(stream), wire::CopyKind::Memset, count, false});
        return cudaSuccess;
    }

    // Pitched (2D) copies move width x height bytes; the host rows they write are
    // handled row by row, as the pitches say.
    cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                  size_t width, size_t height, cudaMemcpyKind kind,
                                  cudaStream_t stream)
    {
        HookScope scope;
        if (width > dpitch || width > spitch)
        {
            return Status(cudaErrorInvalidPitchValue);
        }
        const wire::CopyKind k = CopyKindOf(dst, src, kind);
        WritePitched(dst, dpitch, src, spitch, width, height, k);
        scope.Client().Post(CopyOf(StreamId(stream), k, width * height, false, dst, src));
        return cudaSuccess;
    }

    cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                             size_t height, cudaMemcpyKind kind)
    {
        HookScope scope;
        if (width > dpitch || width > spitch)
        {
            return Status(cudaErrorInvalidPitchValue);
        }
        const wire::CopyKind k = CopyKindOf(dst, src, kind);
        WritePitched(dst, dpitch, src, spitch, width, height, k);
        WaitFor(scope, CopyOf(0, k, width * height, true, dst, src));
        return cudaSuccess;
    }

    // Peer copies between simulated GPUs are device-to-device copies on the timeline.
    cudaError_t cudaMemcpyPeerAsync(void* dst, int, const void* src, int, size_t count,
                                    cudaStream_t stream)
    {
        return cudaMemcpyAsync(dst, src, count, cudaMemcpyDeviceToDevice, stream);
    }

    cudaError_t cudaMemcpyPeer(void* dst, int, const void* src, int, size_t count)
    {
        return cudaMemcpy(dst, src, count, cudaMemcpyDeviceToDevice);
    }

    // A __device__ variable's bytes live on the GPU: to it is host-to-device, from it
    // device-to-host (unless the kind says otherwise).
    cudaError_t cudaMemcpyToSymbolAsync(const void*, const void*, size_t count, size_t,
                                        cudaMemcpyKind kind, cudaStream_t stream)
    {
        HookScope scope;
        const wire::CopyKind k = kind == cudaMemcpyDeviceToDevice ? wire::CopyKind::DeviceToDevice
                                                                  : wire::CopyKind::HostToDevice;
        scope.Client().Post(wire::Memcpy{StreamId(stream), k, count, false});
        return cudaSuccess;
    }

    cudaError_t cudaMemcpyToSymbol(const void*, const void*, size_t count, size_t,
                                   cudaMemcpyKind kind)
    {
        HookScope scope;
        const wire::CopyKind k = kind == cudaMemcpyDeviceToDevice ? wire::CopyKind::DeviceToDevice
                                                                  : wire::CopyKind::HostToDevice;
        WaitFor(scope, wire::Memcpy{0, k, count, true});
        return cudaSuccess;
    }

    cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void*, size_t count, size_t,
                                          cudaMemcpyKind kind, cudaStream_t stream)
    {
        HookScope scope;
        const wire::CopyKind k = kind == cudaMemcpyDeviceToDevice ? wire::CopyKind::DeviceToDevice
                                                                  : wire::CopyKind::DeviceToHost;
        WriteHostSide(dst, nullptr, count, k);
        scope.Client().Post(wire::Memcpy{StreamId(stream), k, count, false});
        return cudaSuccess;
    }

    cudaError_t cudaMemcpyFromSymbol(void* dst, const void*, size_t count, size_t,
                                     cudaMemcpyKind kind)
    {
        HookScope scope;
        const wire::CopyKind k = kind == cudaMemcpyDeviceToDevice ? wire::CopyKind::DeviceToDevice
                                                                  : wire::CopyKind::DeviceToHost;
        WriteHostSide(dst, nullptr, count, k);
        WaitFor(scope, wire::Memcpy{0, k, count, true});
        return cudaSuccess;
    }

    cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int, size_t width, size_t height,
                                  cudaStream_t stream)
    {
        HookScope scope;
        if (!DeviceMemory::Get().Contains(devPtr) || width > pitch)
        {
            return Status(cudaErrorInvalidValue);
        }
        if (height > 0)
        {
            ValueShadow::Get().Forget(Addr(devPtr), pitch * (height - 1) + width);
        }
        scope.Client().Post(
            wire::Memcpy{StreamId(stream), wire::CopyKind::Memset, width * height, false});
        return cudaSuccess;
    }

    cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height)
    {
        return cudaMemset2DAsync(devPtr, pitch, value, width, height, nullptr);
    }

    cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                 size_t sharedMem, cudaStream_t stream)
    {
        return LaunchKernel(func, gridDim, blockDim, args, sharedMem, stream);
    }

    // What nvcc 13's generated launch stubs call (via __cudaGetKernel's handle).
    cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                   size_t sharedMem, cudaStream_t stream)
    {
        return LaunchKernel(reinterpret_cast<const void*>(kernel), gridDim, blockDim, args,
                            sharedMem, stream);
    }

    cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                        void** args, size_t sharedMem, cudaStream_t stream)
    {
        return LaunchKernel(reinterpret_cast<const void*>(kernel), gridDim, blockDim, args,
                            sharedMem, stream);
    }

    cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags)
    {
        HookScope scope;
        if (!stream)
        {
            return Status(cudaErrorInvalidValue);
        }
        // Handles are opaque to the program: ours are the stream's id on the wire.
        uintptr_t id = NewId(IdKind::Stream);
        if (flags & cudaStreamNonBlocking)
        {
            id |= wire::kNonBlockingBit;
        }
        *stream = reinterpret_cast<cudaStream_t>(id);
        return cudaSuccess;
    }

    cudaError_t cudaStreamCreate(cudaStream_t* stream)
    {
        return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
    }

    cudaError_t cudaStreamDestroy(cudaStream_t)
    {
        HookScope scope;
        return cudaSuccess;
    }

    cudaError_t cudaStreamSynchronize(cudaStream_t stream)
    {
        HookScope scope;
        if (StreamCapture::Get().ForbidsUnsafeCall("cudaStreamSynchronize") ||
            StreamCapture::Get().Capturing(StreamId(stream)))
        {
            return Status(cudaErrorStreamCaptureUnsupported);
        }
        WaitFor(scope, wire::Synchronize{false, StreamId(stream)});
        return cudaSuccess;
    }

    cudaError_t cudaDeviceSynchronize()
    {
        HookScope scope;
        if (StreamCapture::Get().ForbidsUnsafeCall("cudaDeviceSynchronize"))
        {
            return Status(cudaErrorStreamCaptureUnsupported);
        }
        WaitFor(scope, wire::Synchronize{true, 0});
        return cudaSuccess;
    }

    cudaError_t cudaGetLastError()
    {
        const cudaError_t e = ThreadState().lastError;
        ThreadState().lastError = cudaSuccess;
        return e;
    }

    cudaError_t cudaPeekAtLastError()
    {
        return ThreadState().lastError;
    }

    // Pure table look-ups in the real runtime: safe without a driver, and the text
    // must be exactly what the program would print on a real machine.
    const char* cudaGetErrorString(cudaError_t error)
    {
        static auto real = OptionalRealFunction<const char* (*)(cudaError_t)>("cudaGetErrorString");
        return real ? real(error) : "CUDA error (no runtime library loaded to describe it)";
    }

    const char* cudaGetErrorName(cudaError_t error)
    {
        static auto real = OptionalRealFunction<const char* (*)(cudaError_t)>("cudaGetErrorName");
        return real ? real(error) : "cudaErrorUnknown";
    }

} // extern "C"
