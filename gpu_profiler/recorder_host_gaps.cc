#include "recorder_host_gaps.h"

#include "cuda_abi/real_symbol.h"
#include "host_time/host_boundary.h"
#include "host_time/host_call_site.h"
#include "host_time/host_label.h"
#include "host_time/readback_table.h"
#include "recorder_real_symbol.h"

#include <algorithm>
#include <climits>
#include <cuda_runtime_api.h>
#include <cxxabi.h>
#include <map>
#include <memory>
#include <mutex>
#include <nccl.h>
#include <poll.h>
#include <pthread.h>
#include <string>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace phantora::recorder
{

namespace
{

namespace b = host_time::boundary;

int64_t MonotonicNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// What one reading of the clock leaves in the interval it ends or starts: every gap and
/// every call is bounded by two readings, so each carries about one that is not the
/// program's.  Measured once per process as the least of many back-to-back intervals, as
/// the interposer's SimClock does, so that the program is never charged less than it used.
int64_t ReadingCostNs()
{
    static const int64_t cost = []
    {
        int64_t least = INT64_MAX;
        for (int i = 0; i < 2000; ++i)
        {
            const int64_t a = MonotonicNs();
            least = std::min(least, MonotonicNs() - a);
        }
        return std::max<int64_t>(least, 0);
    }();
    return cost;
}

struct ThreadGaps
{
    std::vector<std::string> labels;
    std::vector<int64_t> gapBeforeNs;
    std::vector<int64_t> callNs;
    std::map<std::size_t, std::string> reads; ///< call position -> bytes read back
};

/// An asynchronous device-to-host copy whose bytes are not there yet.
struct PendingRead
{
    std::size_t index;
    const void* dst;
    std::size_t count;
};

struct Gaps
{
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<ThreadGaps>> threads; ///< "pid.tid" -> its calls
    std::unordered_map<const void*, std::string> kernelNames;
};

Gaps& G()
{
    static auto* g = new Gaps; // never destroyed: threads make calls during exit
    return *g;
}

struct ThreadState
{
    int depth{0};
    int64_t lastExitNs{-1}; ///< -1: no boundary yet
    int64_t blockedNs{0};   ///< time blocked in a modelled wait, ever (WaitScope)
    int64_t blockedAtLastExit{0};
    ThreadGaps* gaps{nullptr};
    int ncclGroupDepth{0};
    bool ncclGroupHasP2P{false};
    std::vector<PendingRead> pendingReads;
};

thread_local ThreadState t_state;

ThreadGaps& Mine()
{
    ThreadState& t = t_state;
    if (!t.gaps)
    {
        const std::string key =
            std::to_string(getpid()) + "." + std::to_string(static_cast<long>(gettid()));
        Gaps& g = G();
        std::lock_guard lock(g.mutex);
        auto& slot = g.threads[key];
        if (!slot)
        {
            slot = std::make_unique<ThreadGaps>();
        }
        t.gaps = slot.get();
    }
    return *t.gaps;
}

template <class F> F Cudart(const char* name)
{
    return RealSymbol<F>(name, {"libcudart.so.13", "libcudart.so.12", "libcudart.so"});
}

template <class F> F Nccl(const char* name)
{
    return RealSymbol<F>(name, {"libnccl.so.2", "libnccl.so"});
}

} // namespace

bool HostOnly()
{
    static const bool on = std::getenv("PHANTORA_RECORD_HOST_ONLY") != nullptr;
    return on;
}

bool HostBoundary::Begin()
{
    if (!HostOnly())
    {
        return false; // the CUPTI pass: its gaps would be CUPTI's as much as the program's
    }
    const int64_t reading = ReadingCostNs(); // first: measuring it once costs time too
    m_enterNs = MonotonicNs() - reading;
    m_outer = t_state.depth++ == 0;
    return m_outer;
}

void HostBoundary::Record(std::string_view what, const void* caller)
{
    ThreadState& t = t_state;
    const int64_t gap =
        t.lastExitNs < 0
            ? -1
            : std::max<int64_t>(m_enterNs - t.lastExitNs - (t.blockedNs - t.blockedAtLastExit), 0);
    std::string label = host_time::HostLabel::Make(what, host_time::CallSiteOf(caller)).text;
    ThreadGaps& mine = Mine();
    // Only this thread appends to its sequence; the lock orders it against the writer.
    {
        std::lock_guard lock(G().mutex);
        mine.labels.push_back(std::move(label));
        mine.gapBeforeNs.push_back(gap);
        mine.callNs.push_back(-1); // set when the call returns, if it does not wait
    }
    m_index = mine.labels.size() - 1;
    m_costed = !host_time::boundary::Waits(what);
    m_synchronises = what == b::kStreamSync || what == b::kDeviceSync || what == b::kEventSync ||
                     what == b::kCopySync;
    m_blockedAtCallStart = t.blockedNs;
    m_callStartNs = MonotonicNs();
}

HostBoundary::~HostBoundary()
{
    if (!HostOnly())
    {
        return;
    }
    --t_state.depth;
    if (m_outer)
    {
        ThreadState& t = t_state;
        if (m_synchronises && !t.pendingReads.empty())
        {
            // Inside the call (a wait, whose own time is not kept), not the next gap.
            ThreadGaps& mine = Mine();
            std::lock_guard lock(G().mutex);
            for (const PendingRead& r : t.pendingReads)
            {
                mine.reads[r.index].assign(static_cast<const char*>(r.dst), r.count);
            }
            t.pendingReads.clear();
        }
        const int64_t now = MonotonicNs();
        if (m_costed)
        {
            const int64_t blocked = t.blockedNs - m_blockedAtCallStart;
            ThreadGaps& mine = Mine();
            std::lock_guard lock(G().mutex);
            mine.callNs.back() =
                std::max<int64_t>(now - m_callStartNs - blocked - ReadingCostNs(), 0);
        }
        t.lastExitNs = now;
        t.blockedAtLastExit = t.blockedNs;
    }
}

void HostBoundary::ReadBack(void* dst, const void* src, std::size_t count, int kind,
                            bool synchronous, int status)
{
    if (!m_outer || status != cudaSuccess || count == 0 || count > host_time::kMaxReadbackBytes ||
        !dst)
    {
        return;
    }
    if (kind == cudaMemcpyDefault)
    {
        // Unified addressing: the pointers say the direction.
        static auto attributes =
            Cudart<decltype(&cudaPointerGetAttributes)>("cudaPointerGetAttributes");
        const auto onDevice = [](const void* p)
        {
            cudaPointerAttributes a{};
            return attributes(&a, p) == cudaSuccess &&
                   (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged);
        };
        if (!onDevice(src) || onDevice(dst))
        {
            return;
        }
    }
    else if (kind != cudaMemcpyDeviceToHost)
    {
        return;
    }
    ThreadState& t = t_state;
    if (synchronous)
    {
        ThreadGaps& mine = Mine();
        std::lock_guard lock(G().mutex);
        mine.reads[m_index].assign(static_cast<const char*>(dst), count);
        return;
    }
    // A program that never synchronises after its copy cannot have used the bytes.
    constexpr std::size_t kMaxPending = 256;
    if (t.pendingReads.size() < kMaxPending)
    {
        t.pendingReads.push_back({m_index, dst, count});
    }
}

void RememberKernelName(const void* hostFun, const char* deviceName)
{
    std::string name = deviceName ? deviceName : "";
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d(
        abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
    if (status == 0 && d)
    {
        name = d.get();
    }
    Gaps& g = G();
    std::lock_guard lock(g.mutex);
    g.kernelNames[hostFun] = std::move(name);
}

std::string KernelName(const void* hostFun)
{
    Gaps& g = G();
    std::lock_guard lock(g.mutex);
    auto it = g.kernelNames.find(hostFun);
    if (it != g.kernelNames.end())
    {
        return it->second;
    }
    // As the interposer names a kernel it never saw registered (kernel_registry.cc).
    char buf[64];
    std::snprintf(buf, sizeof buf, "unregistered_kernel@%p", hostFun);
    return buf;
}

std::size_t WriteHostGaps(std::FILE* out)
{
    Gaps& g = G();
    std::lock_guard lock(g.mutex);
    std::size_t n = 0;
    for (const auto& [thread, gaps] : g.threads)
    {
        for (std::size_t i = 0; i < gaps->labels.size(); ++i)
        {
            std::fprintf(out, "gap\t%s\t%lld\t%s\t%lld\n", thread.c_str(),
                         static_cast<long long>(gaps->gapBeforeNs[i]), gaps->labels[i].c_str(),
                         static_cast<long long>(gaps->callNs[i]));
            ++n;
        }
        for (const auto& [index, bytes] : gaps->reads)
        {
            std::fprintf(out, "readback\t%s\t%zu\t", thread.c_str(), index);
            for (unsigned char c : bytes)
            {
                std::fprintf(out, "%02x", c);
            }
            std::fputc('\n', out);
        }
    }
    return n;
}

} // namespace phantora::recorder

using phantora::recorder::Cudart;
using phantora::recorder::HostBoundary;
using phantora::recorder::Nccl;
namespace b = phantora::host_time::boundary;

// The boundary calls the launch and GEMM hooks do not already stand in front of
// (recorder_launch_hooks.cc, recorder_preload.cc).  Each forwards to the real call.
#define PHANTORA_FORWARD(lib, name, what, ...)                                                     \
    static auto real = lib<decltype(&name)>(#name);                                                \
    HostBoundary boundary(what, __builtin_return_address(0));                                      \
    return real(__VA_ARGS__)

extern "C"
{

    cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind)
    {
        static auto real = Cudart<decltype(&cudaMemcpy)>("cudaMemcpy");
        HostBoundary boundary(b::kCopySync, __builtin_return_address(0));
        const cudaError_t status = real(dst, src, count, kind);
        boundary.ReadBack(dst, src, count, kind, true, status);
        return status;
    }
    cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                cudaStream_t stream)
    {
        static auto real = Cudart<decltype(&cudaMemcpyAsync)>("cudaMemcpyAsync");
        HostBoundary boundary(b::kCopyAsync, __builtin_return_address(0));
        const cudaError_t status = real(dst, src, count, kind, stream);
        boundary.ReadBack(dst, src, count, kind, false, status);
        return status;
    }
    cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
                             size_t width, size_t height, cudaMemcpyKind kind)
    {
        PHANTORA_FORWARD(Cudart, cudaMemcpy2D, b::kCopySync, dst, dpitch, src, spitch, width,
                         height, kind);
    }
    cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                  size_t width, size_t height, cudaMemcpyKind kind,
                                  cudaStream_t stream)
    {
        PHANTORA_FORWARD(Cudart, cudaMemcpy2DAsync, b::kCopyAsync, dst, dpitch, src, spitch,
                         width, height, kind, stream);
    }
    cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice,
                               size_t count)
    {
        PHANTORA_FORWARD(Cudart, cudaMemcpyPeer, b::kCopySync, dst, dstDevice, src, srcDevice,
                         count);
    }
    cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                    size_t count, cudaStream_t stream)
    {
        PHANTORA_FORWARD(Cudart, cudaMemcpyPeerAsync, b::kCopyAsync, dst, dstDevice, src,
                         srcDevice, count, stream);
    }
    cudaError_t cudaMemset(void* ptr, int value, size_t count)
    {
        PHANTORA_FORWARD(Cudart, cudaMemset, b::kMemset, ptr, value, count);
    }
    cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream)
    {
        PHANTORA_FORWARD(Cudart, cudaMemsetAsync, b::kMemset, ptr, value, count, stream);
    }
    cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
    {
        PHANTORA_FORWARD(Cudart, cudaEventRecord, b::kEventRecord, event, stream);
    }
    cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                         unsigned int flags)
    {
        PHANTORA_FORWARD(Cudart, cudaEventRecordWithFlags, b::kEventRecord, event, stream, flags);
    }
    cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
    {
        PHANTORA_FORWARD(Cudart, cudaStreamWaitEvent, b::kStreamWaitEvent, stream, event, flags);
    }
    cudaError_t cudaEventQuery(cudaEvent_t event)
    {
        PHANTORA_FORWARD(Cudart, cudaEventQuery, b::kEventQuery, event);
    }
    cudaError_t cudaEventSynchronize(cudaEvent_t event)
    {
        PHANTORA_FORWARD(Cudart, cudaEventSynchronize, b::kEventSync, event);
    }
    cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end)
    {
        PHANTORA_FORWARD(Cudart, cudaEventElapsedTime, b::kEventElapsed, ms, start, end);
    }
    // One boundary per replay, whatever the graph holds, as the simulator's interposer posts it.
    cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
    {
        PHANTORA_FORWARD(Cudart, cudaGraphLaunch, b::kGraphLaunch, exec, stream);
    }
    cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream)
    {
        using Fn = cudaError_t (*)(cudaGraphExec_t, cudaStream_t);
        static auto real = Cudart<Fn>("cudaGraphLaunch_ptsz");
        HostBoundary boundary(b::kGraphLaunch, __builtin_return_address(0));
        return real(exec, stream);
    }
    cudaError_t cudaStreamQuery(cudaStream_t stream)
    {
        PHANTORA_FORWARD(Cudart, cudaStreamQuery, b::kStreamQuery, stream);
    }
    cudaError_t cudaStreamSynchronize(cudaStream_t stream)
    {
        PHANTORA_FORWARD(Cudart, cudaStreamSynchronize, b::kStreamSync, stream);
    }
    cudaError_t cudaDeviceSynchronize()
    {
        PHANTORA_FORWARD(Cudart, cudaDeviceSynchronize, b::kDeviceSync);
    }
    cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData)
    {
        PHANTORA_FORWARD(Cudart, cudaLaunchHostFunc, b::kHostFunction, stream, fn, userData);
    }
    cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                      void* userData, unsigned int flags)
    {
        PHANTORA_FORWARD(Cudart, cudaStreamAddCallback, b::kHostFunction, stream, callback,
                         userData, flags);
    }

    ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream)
    {
        PHANTORA_FORWARD(Nccl, ncclAllReduce, b::Collective("AllReduce"), sendbuff, recvbuff,
                         count, datatype, op, comm, stream);
    }
    ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
    {
        PHANTORA_FORWARD(Nccl, ncclAllGather, b::Collective("AllGather"), sendbuff, recvbuff,
                         sendcount, datatype, comm, stream);
    }
    ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                   ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                   cudaStream_t stream)
    {
        PHANTORA_FORWARD(Nccl, ncclReduceScatter, b::Collective("ReduceScatter"), sendbuff,
                         recvbuff, recvcount, datatype, op, comm, stream);
    }
    ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                               ncclDataType_t datatype, int root, ncclComm_t comm,
                               cudaStream_t stream)
    {
        PHANTORA_FORWARD(Nccl, ncclBroadcast, b::Collective("Broadcast"), sendbuff, recvbuff,
                         count, datatype, root, comm, stream);
    }
    ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream)
    {
        PHANTORA_FORWARD(Nccl, ncclBcast, b::Collective("Broadcast"), buff, count, datatype, root,
                         comm, stream);
    }
    ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                            cudaStream_t stream)
    {
        PHANTORA_FORWARD(Nccl, ncclReduce, b::Collective("Reduce"), sendbuff, recvbuff, count,
                         datatype, op, root, comm, stream);
    }
    ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                              ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
    {
        PHANTORA_FORWARD(Nccl, ncclAlltoAll, b::Collective("AlltoAll"), sendbuff, recvbuff,
                         count, datatype, comm, stream);
    }
    ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)
    {
        PHANTORA_FORWARD(Nccl, ncclCommInitRank, b::kCommInit, comm, nranks, commId, rank);
    }
    ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                        int rank, ncclConfig_t* config)
    {
        PHANTORA_FORWARD(Nccl, ncclCommInitRankConfig, b::kCommInit, comm, nranks, commId, rank,
                         config);
    }
    ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                               ncclConfig_t* config)
    {
        PHANTORA_FORWARD(Nccl, ncclCommSplit, b::kCommSplit, comm, color, key, newcomm, config);
    }
    ncclResult_t ncclCommDestroy(ncclComm_t comm)
    {
        PHANTORA_FORWARD(Nccl, ncclCommDestroy, b::kCommDestroy, comm);
    }
    ncclResult_t ncclCommAbort(ncclComm_t comm)
    {
        PHANTORA_FORWARD(Nccl, ncclCommAbort, b::kCommDestroy, comm);
    }

    // Sends and receives inside a group are one boundary, at the group's end, as the
    // interposer makes them one operation there (interposer/nccl_hooks.cc).
    ncclResult_t ncclGroupStart()
    {
        static auto real = Nccl<decltype(&ncclGroupStart)>("ncclGroupStart");
        ++phantora::recorder::t_state.ncclGroupDepth;
        return real();
    }
    ncclResult_t ncclGroupEnd()
    {
        static auto real = Nccl<decltype(&ncclGroupEnd)>("ncclGroupEnd");
        auto& t = phantora::recorder::t_state;
        const bool last = t.ncclGroupDepth > 0 && --t.ncclGroupDepth == 0;
        if (!last || !t.ncclGroupHasP2P)
        {
            return real();
        }
        t.ncclGroupHasP2P = false;
        HostBoundary boundary(b::kSendRecv, __builtin_return_address(0));
        return real();
    }
    ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                          ncclComm_t comm, cudaStream_t stream)
    {
        static auto real = Nccl<decltype(&ncclSend)>("ncclSend");
        auto& t = phantora::recorder::t_state;
        if (t.ncclGroupDepth > 0)
        {
            t.ncclGroupHasP2P = true;
            return real(sendbuff, count, datatype, peer, comm, stream);
        }
        HostBoundary boundary(b::kSendRecv, __builtin_return_address(0));
        return real(sendbuff, count, datatype, peer, comm, stream);
    }
    ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                          ncclComm_t comm, cudaStream_t stream)
    {
        static auto real = Nccl<decltype(&ncclRecv)>("ncclRecv");
        auto& t = phantora::recorder::t_state;
        if (t.ncclGroupDepth > 0)
        {
            t.ncclGroupHasP2P = true;
            return real(recvbuff, count, datatype, peer, comm, stream);
        }
        HostBoundary boundary(b::kSendRecv, __builtin_return_address(0));
        return real(recvbuff, count, datatype, peer, comm, stream);
    }

} // extern "C"

// The waits the simulation models itself (interposer/thread_handoff.cc): a thread's time
// blocked in them is no host time of a gap, since the simulation hands the thread over
// at its own clock.  Only counted in the host-time pass.
namespace
{

class WaitScope
{
public:
    WaitScope() : m_start(phantora::recorder::HostOnly() ? phantora::recorder::MonotonicNs() : -1) {}
    ~WaitScope()
    {
        if (m_start >= 0)
        {
            phantora::recorder::t_state.blockedNs += phantora::recorder::MonotonicNs() - m_start;
        }
    }
    WaitScope(const WaitScope&) = delete;
    WaitScope& operator=(const WaitScope&) = delete;

private:
    int64_t m_start;
};

/// The libc entry point behind \p name (\p version where glibc keeps several).
template <class F> F Libc(const char* name, const char* version = nullptr)
{
    return phantora::real_symbol::As<F>(
        phantora::real_symbol::Require({.name = name, .version = version}));
}

} // namespace

#define PHANTORA_WAIT(name, version, ...)                                                           \
    static auto real = Libc<decltype(&name)>(#name, version);                                      \
    WaitScope wait;                                                                                \
    return real(__VA_ARGS__)

extern "C"
{

    int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex)
    {
        PHANTORA_WAIT(pthread_cond_wait, "GLIBC_2.3.2", cond, mutex);
    }
    int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const timespec* abs)
    {
        PHANTORA_WAIT(pthread_cond_timedwait, "GLIBC_2.3.2", cond, mutex, abs);
    }
    int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                               const timespec* abs)
    {
        PHANTORA_WAIT(pthread_cond_clockwait, nullptr, cond, mutex, clock, abs);
    }
    int pthread_join(pthread_t thread, void** ret)
    {
        PHANTORA_WAIT(pthread_join, "GLIBC_2.34", thread, ret);
    }
    int nanosleep(const timespec* req, timespec* rem)
    {
        PHANTORA_WAIT(nanosleep, nullptr, req, rem);
    }
    int clock_nanosleep(clockid_t clock, int flags, const timespec* req, timespec* rem)
    {
        PHANTORA_WAIT(clock_nanosleep, nullptr, clock, flags, req, rem);
    }
    int usleep(useconds_t us)
    {
        PHANTORA_WAIT(usleep, nullptr, us);
    }
    unsigned sleep(unsigned s)
    {
        PHANTORA_WAIT(sleep, nullptr, s);
    }
    int poll(pollfd* fds, nfds_t n, int timeout)
    {
        PHANTORA_WAIT(poll, nullptr, fds, n, timeout);
    }
    int ppoll(pollfd* fds, nfds_t n, const timespec* timeout, const sigset_t* mask)
    {
        PHANTORA_WAIT(ppoll, nullptr, fds, n, timeout, mask);
    }
    int epoll_wait(int fd, epoll_event* events, int max, int timeout)
    {
        PHANTORA_WAIT(epoll_wait, nullptr, fd, events, max, timeout);
    }
    int epoll_pwait(int fd, epoll_event* events, int max, int timeout, const sigset_t* mask)
    {
        PHANTORA_WAIT(epoll_pwait, nullptr, fd, events, max, timeout, mask);
    }
    int select(int n, fd_set* r, fd_set* w, fd_set* e, timeval* timeout)
    {
        PHANTORA_WAIT(select, nullptr, n, r, w, e, timeout);
    }

} // extern "C"
