// The boundary calls of the host-time profile (host_label.h), by what they are called,
// in one place: the recorder names the real library calls with these, the interposer
// names its requests to the bridge with them, and the two must agree.
#pragma once

#include <string>
#include <string_view>

namespace phantora::host_time::boundary
{

inline std::string Launch(std::string_view kernel)
{
    return std::string("launch:").append(kernel);
}
/// A cuBLAS / cuBLASLt / cuDNN call that runs a GEMM or a graph: its API name, without
/// the shape (the host's work does not depend on it, and other ranks' shapes differ).
inline std::string Library(std::string_view api)
{
    return std::string("call:").append(api.substr(0, api.find('(')));
}
inline constexpr const char* kCopySync = "copy:sync";
inline constexpr const char* kCopyAsync = "copy:async";
inline constexpr const char* kMemset = "memset";
inline constexpr const char* kEventRecord = "event:record";
inline constexpr const char* kStreamWaitEvent = "event:wait";
inline constexpr const char* kEventQuery = "event:query";
inline constexpr const char* kEventSync = "event:sync";
inline constexpr const char* kEventElapsed = "event:elapsed";
inline constexpr const char* kStreamQuery = "stream:query";
inline constexpr const char* kStreamSync = "sync:stream";
inline constexpr const char* kDeviceSync = "sync:device";
inline constexpr const char* kHostFunction = "hostfn";
/// cudaGraphLaunch: one boundary for the whole replay, whatever its nodes.
inline constexpr const char* kGraphLaunch = "graph:launch";
inline constexpr const char* kCommInit = "comm:init";
inline constexpr const char* kCommSplit = "comm:split";
inline constexpr const char* kCommDestroy = "comm:destroy";
/// Sends and receives: one boundary per call outside a group, one per group end inside.
inline constexpr const char* kSendRecv = "nccl:send_recv";
/// \p op as NCCL names the call without its prefix: "AllReduce", "AllGather", ...
inline std::string Collective(std::string_view op)
{
    return std::string("nccl:").append(op);
}

/// Whether the call \p what (one of the above) can wait for the GPU or for other ranks:
/// its own host time is mostly waiting (and CUDA spins while it waits), which the
/// simulation derives from its timeline, so the recorder keeps no cost for it.
inline bool Waits(std::string_view what)
{
    return what == kCopySync || what == kEventSync || what == kStreamSync || what == kDeviceSync ||
           what == kCommInit || what == kCommSplit || what == kCommDestroy;
}

} // namespace phantora::host_time::boundary
