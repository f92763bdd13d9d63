// NCCL as the program sees it.  Communicators are handles the bridge knows;
// collectives become ops on the caller's stream whose end the network decides.
#include "cuda_state.h"
#include "hook_scope.h"
#include "nccl_comm.h"
#include "nccl_group.h"
#include "request_boundary.h"
#include "stream_capture.h"
#include "value_shadow.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <mutex>
#include <nccl.h>
#include <optional>
#include <string>
#include <sys/random.h>
#include <unistd.h>
#include <vector>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

ncclComm* Lookup(ncclComm_t comm)
{
    return Communicators().Find(comm);
}

/// What NCCL would read from this process's environment, and from the config passed
/// to the call, to tune the new communicator: sent as it is, the bridge parses it
/// (nccl/environment.h).
nccl::Environment TuningEnv(const ncclConfig_t* config)
{
    if (!config)
    {
        return nccl::Environment::OfProcess();
    }
    auto given = [](int ctas)
    { return ctas == NCCL_CONFIG_UNDEF_INT ? std::nullopt : std::optional<int>(ctas); };
    return nccl::Environment::OfProcess(given(config->minCTAs), given(config->maxCTAs));
}

/// Issues a collective.  Its send buffer's bytes travel with it when the value
/// shadow knows all of them and both buffers are small (see value_shadow.h): the
/// receive buffer then reads back the real result.
ncclResult_t PostCollective(ncclComm_t comm, wire::CollectiveOp op, const void* sendbuf,
                            void* recvbuf, size_t count, ncclDataType_t datatype, ncclRedOp_t redOp,
                            cudaStream_t stream, int root = 0)
{
    HookScope scope;
    ncclComm* c = Lookup(comm);
    const size_t elem = NcclTypeSize(datatype);
    if (!c || elem == 0 || root < 0 || root >= c->nranks || !ValidRedOp(*c, redOp))
    {
        return ncclInvalidArgument;
    }
    const uint64_t n = static_cast<uint64_t>(c->nranks);
    const uint64_t one = count * elem;
    uint64_t sendBytes = one;
    uint64_t recvBytes = one;
    uint64_t wireBytes = one; // what the bridge times (see wire::CollectiveOp)
    switch (op)
    {
    case wire::CollectiveOp::AllGather:
        recvBytes = wireBytes = one * n;
        break;
    case wire::CollectiveOp::ReduceScatter:
        sendBytes = wireBytes = one * n;
        break;
    case wire::CollectiveOp::AllToAll:
        sendBytes = recvBytes = wireBytes = one * n;
        break;
    default:
        break;
    }
    wire::NcclCollective m;
    m.comm = c->handle;
    m.op = op;
    m.bytes = wireBytes;
    m.stream = StreamId(stream);
    m.root = root;
    m.dataType = static_cast<wire::DataType>(datatype);
    m.redOp = static_cast<int>(redOp) < ncclNumOps ? static_cast<wire::RedOp>(redOp)
                                                   : wire::RedOp::PreMulSum;
    const bool writesRecv = op != wire::CollectiveOp::Reduce || c->rank == root;
    ValueShadow& shadow = ValueShadow::Get();
    if (c->nranks == 1 && op != wire::CollectiveOp::AllToAll && m.redOp != wire::RedOp::PreMulSum &&
        m.redOp != wire::RedOp::Avg)
    {
        // NCCL launches no kernel on a one-rank communicator (ncclLaunchOneRank): the result
        // is the input, copied with cudaMemcpyAsync when the buffers differ, and nothing at
        // all runs (nor is captured) in place.  Only a scaling reduction (PreMulSum, a
        // floating-point average) launches a kernel, timed as a collective below.
        scope.Client().ChargeBoundary(*BoundaryOf(wire::Request{m}));
        if (sendbuf != recvbuf && recvbuf)
        {
            shadow.Copy(reinterpret_cast<uintptr_t>(recvbuf), reinterpret_cast<uintptr_t>(sendbuf),
                        recvBytes, BridgeFetch());
            wire::Memcpy copy;
            copy.stream = m.stream;
            copy.kind = wire::CopyKind::DeviceToDevice;
            copy.bytes = recvBytes;
            scope.Client().Post(std::move(copy), RankClient::Gap::Inside);
        }
        return ncclSuccess;
    }
    if (StreamCapture::AnyActive() &&
        StreamCapture::Get().AddReplayHook(m.stream,
                                           [comm]
                                           {
                                               if (ncclComm* live = Lookup(comm))
                                               {
                                                   live->collectives.fetch_add(1);
                                               }
                                           }))
    {
        // Captured into a CUDA graph: the bridge numbers it at each replay (the hook keeps
        // this count with it), and its values are the replay's, which nothing reads back.
        if (writesRecv && recvbuf)
        {
            shadow.Forget(reinterpret_cast<uintptr_t>(recvbuf), recvBytes);
        }
        scope.Client().Post(std::move(m));
        return ncclSuccess;
    }
    const uint64_t sequence = c->collectives.fetch_add(1);
    if (sendBytes <= ValueShadow::kMaxBytes && recvBytes <= ValueShadow::kMaxBytes &&
        static_cast<int>(redOp) <= static_cast<int>(wire::RedOp::Avg))
    {
        if (op == wire::CollectiveOp::Broadcast && c->rank != root)
        {
            m.hasValues = true; // a broadcast's result is the root's alone
        }
        else if (auto bytes =
                     shadow.Known(reinterpret_cast<uintptr_t>(sendbuf), sendBytes, BridgeFetch()))
        {
            m.hasValues = true;
            m.values = std::move(*bytes);
        }
    }
    if (writesRecv && recvbuf)
    {
        if (m.hasValues)
        {
            shadow.MarkPending(reinterpret_cast<uintptr_t>(recvbuf), recvBytes,
                               ValueShadow::Source{c->handle, sequence});
        }
        else
        {
            shadow.Forget(reinterpret_cast<uintptr_t>(recvbuf), recvBytes);
        }
    }
    scope.Client().Post(std::move(m));
    return ncclSuccess;
}

/// Issues a send (of \p buf's bytes) or a receive (into \p buf).  A small send whose
/// bytes the value shadow knows carries them, and a small receive's buffer reads them
/// back from the bridge, as a collective's do (see value_shadow.h): pipeline schedules
/// exchange tensor shapes this way (send_object_list: a size, then pickled bytes).
ncclResult_t PostP2P(ncclComm_t comm, bool send, void* buf, size_t count, ncclDataType_t datatype,
                     int peer, cudaStream_t stream)
{
    HookScope scope;
    ncclComm* c = Lookup(comm);
    const size_t elem = NcclTypeSize(datatype);
    if (!c || elem == 0 || peer < 0 || peer >= c->nranks)
    {
        return ncclInvalidArgument;
    }
    wire::P2POp op;
    op.peer = peer;
    op.bytes = count * elem;
    op.send = send;
    ValueShadow& shadow = ValueShadow::Get();
    const auto addr = reinterpret_cast<uintptr_t>(buf);
    if (send && op.bytes <= ValueShadow::kMaxBytes)
    {
        if (auto bytes = shadow.Known(addr, op.bytes, BridgeFetch()))
        {
            op.hasValues = true;
            op.values = std::move(*bytes);
        }
    }
    else if (!send && StreamCapture::AnyActive() &&
             StreamCapture::Get().AddReplayHook(StreamId(stream),
                                                [comm, peer]
                                                {
                                                    if (ncclComm* live = Lookup(comm))
                                                    {
                                                        std::lock_guard lock(live->recvMutex);
                                                        ++live->recvs[peer];
                                                    }
                                                }))
    {
        // Captured: numbered at each replay, as collectives are (PostCollective).
        shadow.Forget(addr, op.bytes);
    }
    else if (!send)
    {
        uint64_t sequence = 0;
        {
            std::lock_guard lock(c->recvMutex);
            sequence = c->recvs[peer]++;
        }
        if (op.bytes <= ValueShadow::kMaxBytes)
        {
            ValueShadow::Source source{c->handle, sequence, true, peer};
            shadow.MarkPending(addr, op.bytes, source);
        }
        else
        {
            shadow.Forget(addr, op.bytes);
        }
    }
    const uint64_t sid = StreamId(stream);
    NcclGroup& group = NcclGroup::ThisThread();
    if (group.Open())
    {
        group.Add(c->handle, sid, op);
        return ncclSuccess;
    }
    scope.Client().Post(wire::NcclP2P{c->handle, sid, {std::move(op)}});
    return ncclSuccess;
}

} // namespace

extern "C"
{

    ncclResult_t ncclGetVersion(int* version)
    {
        if (!version)
        {
            return ncclInvalidArgument;
        }
        *version = NCCL_VERSION_CODE;
        return ncclSuccess;
    }

    ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId)
    {
        HookScope scope;
        if (!uniqueId)
        {
            return ncclInvalidArgument;
        }
        // Random, like NCCL's (which embeds an address and a magic); the bridge only
        // needs members of one communicator to present the same bytes.
        std::memset(uniqueId, 0, sizeof *uniqueId);
        if (getrandom(uniqueId->internal, sizeof uniqueId->internal, 0) !=
            static_cast<ssize_t>(sizeof uniqueId->internal))
        {
            return ncclSystemError;
        }
        return ncclSuccess;
    }

    ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)
    {
        return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
    }

    ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                        ncclConfig_t* config)
    {
        // Blocking or not, names: they do not change the simulated timeline; CTA counts
        // bound the channels.
        HookScope scope;
        if (!comm || nranks <= 0 || rank < 0 || rank >= nranks)
        {
            return ncclInvalidArgument;
        }
        wire::NcclCommInit init;
        std::memcpy(init.id.data(), commId.internal, init.id.size());
        init.nranks = nranks;
        init.rank = rank;
        init.tuning = TuningEnv(config);
        wire::Reply reply = scope.Client().Call(init);
        const auto* ready = std::get_if<wire::CommReady>(&reply);
        if (!ready)
        {
            return ncclInternalError;
        }
        SimClock::Get().AdvanceTo(ready->clockNs);
        *comm = Communicators().Adopt(
            std::make_unique<ncclComm>(ready->comm, nranks, rank, ThreadState().device));
        return ncclSuccess;
    }

    // One process drives one simulated GPU here, so a single-process communicator can
    // only have one member: that one works, more end the rank saying why.
    ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int*)
    {
        if (!comms || ndev <= 0)
        {
            return ncclInvalidArgument;
        }
        if (ndev > 1)
        {
            Fatal("ncclCommInitAll(ndev " + std::to_string(ndev) +
                  "): Phantora simulates one GPU per process; start one rank per GPU "
                  "(phantora-cluster --nproc) and use ncclCommInitRank");
        }
        ncclUniqueId id{};
        if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
        {
            return r;
        }
        return ncclCommInitRank(comms, 1, id, 0);
    }

    ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                               ncclConfig_t* config)
    {
        HookScope scope;
        ncclComm* parent = Lookup(comm);
        if (!parent || !newcomm || color < NCCL_SPLIT_NOCOLOR)
        {
            return ncclInvalidArgument;
        }
        wire::Reply reply =
            scope.Client().Call(wire::NcclCommSplit{parent->handle, color, key, TuningEnv(config)});
        const auto* ready = std::get_if<wire::CommReady>(&reply);
        if (!ready)
        {
            return ncclInternalError;
        }
        SimClock::Get().AdvanceTo(ready->clockNs);
        *newcomm = nullptr;
        if (ready->comm == 0)
        {
            return ncclSuccess; // NCCL_SPLIT_NOCOLOR
        }
        *newcomm = Communicators().Adopt(
            std::make_unique<ncclComm>(ready->comm, ready->nranks, ready->rank, parent->device));
        return ncclSuccess;
    }

    // Collectives inside a group reach the bridge as they are called; sends and receives
    // wait for the group's end (nccl_group.h).
    ncclResult_t ncclGroupStart()
    {
        NcclGroup::ThisThread().Start();
        return ncclSuccess;
    }

    ncclResult_t ncclGroupEnd()
    {
        std::optional<std::vector<wire::NcclP2P>> batches = NcclGroup::ThisThread().End();
        if (!batches)
        {
            return ncclInvalidUsage;
        }
        if (batches->empty())
        {
            return ncclSuccess;
        }
        HookScope scope;
        for (auto& b : *batches)
        {
            scope.Client().Post(std::move(b));
        }
        return ncclSuccess;
    }

    ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                          ncclComm_t comm, cudaStream_t stream)
    {
        return PostP2P(comm, true, const_cast<void*>(sendbuff), count, datatype, peer, stream);
    }

    ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                          ncclComm_t comm, cudaStream_t stream)
    {
        return PostP2P(comm, false, recvbuff, count, datatype, peer, stream);
    }

    ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError)
    {
        if (!Lookup(comm) || !asyncError)
        {
            return ncclInvalidArgument;
        }
        *asyncError = ncclSuccess; // a simulated network does not fail
        return ncclSuccess;
    }

    const char* ncclGetLastError(ncclComm_t)
    {
        return "";
    }

    ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream)
    {
        return PostCollective(comm, wire::CollectiveOp::AllReduce, sendbuff, recvbuff, count,
                              datatype, op, stream);
    }

    ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
    {
        return PostCollective(comm, wire::CollectiveOp::AllGather, sendbuff, recvbuff, sendcount,
                              datatype, ncclSum, stream);
    }

    ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                   ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                   cudaStream_t stream)
    {
        return PostCollective(comm, wire::CollectiveOp::ReduceScatter, sendbuff, recvbuff,
                              recvcount, datatype, op, stream);
    }

    ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                              ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
    {
        return PostCollective(comm, wire::CollectiveOp::AllToAll, sendbuff, recvbuff, count,
                              datatype, ncclSum, stream);
    }

    ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                               ncclDataType_t datatype, int root, ncclComm_t comm,
                               cudaStream_t stream)
    {
        return PostCollective(comm, wire::CollectiveOp::Broadcast, sendbuff, recvbuff, count,
                              datatype, ncclSum, stream, root);
    }

    ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream)
    {
        return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
    }

    ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                            cudaStream_t stream)
    {
        return PostCollective(comm, wire::CollectiveOp::Reduce, sendbuff, recvbuff, count, datatype,
                              op, stream, root);
    }

    ncclResult_t ncclCommDestroy(ncclComm_t comm)
    {
        HookScope scope;
        std::unique_ptr<ncclComm> owned = Communicators().Take(comm);
        if (!owned)
        {
            return ncclInvalidArgument;
        }
        scope.Client().Post(wire::NcclCommDestroy{owned->handle});
        return ncclSuccess;
    }

    ncclResult_t ncclCommFinalize(ncclComm_t comm)
    {
        return Lookup(comm) ? ncclSuccess : ncclInvalidArgument;
    }

    ncclResult_t ncclCommAbort(ncclComm_t comm)
    {
        return ncclCommDestroy(comm);
    }

    ncclResult_t ncclCommCount(const ncclComm_t comm, int* count)
    {
        ncclComm* c = Lookup(comm);
        if (!c || !count)
        {
            return ncclInvalidArgument;
        }
        *count = c->nranks;
        return ncclSuccess;
    }

    ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank)
    {
        ncclComm* c = Lookup(comm);
        if (!c || !rank)
        {
            return ncclInvalidArgument;
        }
        *rank = c->rank;
        return ncclSuccess;
    }

    ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device)
    {
        ncclComm* c = Lookup(comm);
        if (!c || !device)
        {
            return ncclInvalidArgument;
        }
        *device = c->device;
        return ncclSuccess;
    }

    const char* ncclGetErrorString(ncclResult_t result)
    {
        switch (result)
        {
        case ncclSuccess:
            return "no error";
        case ncclUnhandledCudaError:
            return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
        case ncclSystemError:
            return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
        case ncclInternalError:
            return "internal error - please report this issue to the NCCL developers";
        case ncclInvalidArgument:
            return "invalid argument (run with NCCL_DEBUG=WARN for details)";
        case ncclInvalidUsage:
            return "invalid usage (run with NCCL_DEBUG=WARN for details)";
        case ncclRemoteError:
            return "remote process exited or there was a network error";
        case ncclInProgress:
            return "NCCL operation in progress";
        default:
            return "unknown result code";
        }
    }

} // extern "C"

// The profiling interface's names of the same calls (libnccl.so exports both).
PHANTORA_PNCCL_ALIAS(ncclGetVersion)
PHANTORA_PNCCL_ALIAS(ncclGetUniqueId)
PHANTORA_PNCCL_ALIAS(ncclCommInitRank)
PHANTORA_PNCCL_ALIAS(ncclCommInitRankConfig)
PHANTORA_PNCCL_ALIAS(ncclCommInitAll)
PHANTORA_PNCCL_ALIAS(ncclCommSplit)
PHANTORA_PNCCL_ALIAS(ncclGroupStart)
PHANTORA_PNCCL_ALIAS(ncclGroupEnd)
PHANTORA_PNCCL_ALIAS(ncclSend)
PHANTORA_PNCCL_ALIAS(ncclRecv)
PHANTORA_PNCCL_ALIAS(ncclCommGetAsyncError)
PHANTORA_PNCCL_ALIAS(ncclGetLastError)
PHANTORA_PNCCL_ALIAS(ncclAllReduce)
PHANTORA_PNCCL_ALIAS(ncclAllGather)
PHANTORA_PNCCL_ALIAS(ncclReduceScatter)
PHANTORA_PNCCL_ALIAS(ncclAlltoAll)
PHANTORA_PNCCL_ALIAS(ncclBroadcast)
PHANTORA_PNCCL_ALIAS(ncclBcast)
PHANTORA_PNCCL_ALIAS(ncclReduce)
PHANTORA_PNCCL_ALIAS(ncclCommDestroy)
PHANTORA_PNCCL_ALIAS(ncclCommFinalize)
PHANTORA_PNCCL_ALIAS(ncclCommAbort)
PHANTORA_PNCCL_ALIAS(ncclCommCount)
PHANTORA_PNCCL_ALIAS(ncclCommUserRank)
PHANTORA_PNCCL_ALIAS(ncclCommCuDevice)
PHANTORA_PNCCL_ALIAS(ncclGetErrorString)
