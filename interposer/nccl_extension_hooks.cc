// NCCL's later additions that PyTorch calls (2.19 to 2.28): scalable initialisation,
// shrinking, buffer registration and allocation, pre-multiplied sums, gather and scatter.
// Each is served by what the classic API already simulates: a communicator's creation,
// device memory, a collective, grouped sends and receives.  The rest of NCCL's newer API
// (windows, device communicators, revocation, simulated groups) ends the rank naming the
// call (generate_stubs.sh).
#include "hook_scope.h"
#include "nccl_comm.h"

#include <cstring>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <set>
#include <string>
#include <vector>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

/// One identifier for a communicator that NCCL creates from several: every member passes
/// the same \p n ids in the same order (NCCL's contract), and any difference between two
/// members' lists gives a different result, so a member that was given other ids waits
/// in a communicator of its own and the deadlock report names it.
ncclUniqueId Combine(const ncclUniqueId* ids, int n)
{
    ncclUniqueId out{};
    constexpr int kBytes = sizeof out.internal;
    for (int k = 0; k < n; ++k)
    {
        for (int j = 0; j < kBytes; ++j)
        {
            // rotated by the id's position, so that the same ids in another order differ
            out.internal[j] ^= ids[k].internal[(j + k) % kBytes];
        }
    }
    return out;
}

} // namespace

extern "C"
{

    // PyTorch calls it above TORCH_NCCL_RANKS_PER_ROOT ranks (128), each of its roots
    // having made one of the ids and shared them all through its store.
    ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                          ncclUniqueId* commIds, ncclConfig_t* config)
    {
        if (!newcomm || !commIds || nId <= 0 || nId > nranks)
        {
            return ncclInvalidArgument;
        }
        return ncclCommInitRankConfig(newcomm, nranks, Combine(commIds, nId), myrank, config);
    }

    // The survivors of a communicator (those not in the list) make a new one, ranked in
    // the parent's order; the excluded ranks do not call it.  Created as any other
    // communicator, under an id every survivor derives alike: the parent, how many
    // shrinks of it came before, and the excluded ranks.
    ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                ncclComm_t* newcomm, ncclConfig_t* config, int /*shrinkFlags*/)
    {
        ncclComm* parent = Communicators().Find(comm);
        if (!parent || !newcomm || excludeRanksCount < 0 ||
            (excludeRanksCount > 0 && !excludeRanksList))
        {
            return ncclInvalidArgument;
        }
        const std::set<int> excluded(excludeRanksList, excludeRanksList + excludeRanksCount);
        for (int r : excluded)
        {
            if (r < 0 || r >= parent->nranks)
            {
                return ncclInvalidArgument;
            }
        }
        if (excluded.count(parent->rank) || excluded.size() >= static_cast<size_t>(parent->nranks))
        {
            return ncclInvalidArgument;
        }
        const uint64_t nth = parent->shrinks.fetch_add(1);
        std::vector<uint64_t> words{0x6b6e69726873ull /* "shrink" */, parent->handle, nth};
        words.insert(words.end(), excluded.begin(), excluded.end());
        ncclUniqueId id{};
        std::memcpy(id.internal, words.data(),
                    std::min(sizeof id.internal, words.size() * sizeof(uint64_t)));
        // more excluded ranks than the id holds: fold the rest in
        for (size_t i = sizeof id.internal / sizeof(uint64_t); i < words.size(); ++i)
        {
            uint64_t slot = 0;
            const size_t at = (i % (sizeof id.internal / sizeof(uint64_t))) * sizeof(uint64_t);
            std::memcpy(&slot, id.internal + at, sizeof slot);
            slot = slot * 0x9e3779b97f4a7c15ull + words[i];
            std::memcpy(id.internal + at, &slot, sizeof slot);
        }
        const int below =
            static_cast<int>(std::distance(excluded.begin(), excluded.lower_bound(parent->rank)));
        return ncclCommInitRankConfig(newcomm, parent->nranks - static_cast<int>(excluded.size()),
                                      id, parent->rank - below, config);
    }

    // Registration lets NCCL use a buffer in place (zero-copy, NVLS); the NCCL model times
    // every collective as if copied through NCCL's own buffers, registered or not.
    ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle)
    {
        HookScope scope;
        ncclComm* c = Communicators().Find(comm);
        if (!c || !buff || !handle)
        {
            return ncclInvalidArgument;
        }
        std::lock_guard lock(c->stateMutex);
        c->registrations[reinterpret_cast<uintptr_t>(buff)] = size;
        *handle = buff;
        return ncclSuccess;
    }

    ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle)
    {
        HookScope scope;
        ncclComm* c = Communicators().Find(comm);
        if (!c)
        {
            return ncclInvalidArgument;
        }
        std::lock_guard lock(c->stateMutex);
        return c->registrations.erase(reinterpret_cast<uintptr_t>(handle)) ? ncclSuccess
                                                                           : ncclInvalidArgument;
    }

    // NCCL allocates with the driver's virtual memory calls; the simulated GPU's memory
    // is counted the same whichever way it is taken.
    ncclResult_t ncclMemAlloc(void** ptr, size_t size)
    {
        HookScope scope;
        if (!ptr)
        {
            return ncclInvalidArgument;
        }
        if (size == 0)
        {
            *ptr = nullptr;
            return ncclSuccess;
        }
        return cudaMalloc(ptr, size) == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
    }

    ncclResult_t ncclMemFree(void* ptr)
    {
        HookScope scope;
        if (!ptr)
        {
            return ncclSuccess;
        }
        return cudaFree(ptr) == cudaSuccess ? ncclSuccess : ncclInvalidArgument;
    }

    // A sum of inputs each multiplied by a scalar: timed as a sum (the multiplication is
    // in the reduction's kernel); its values are not computed (see PostCollective).
    ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t,
                                          ncclScalarResidence_t residence, ncclComm_t comm)
    {
        ncclComm* c = Communicators().Find(comm);
        if (!c || !op || !scalar ||
            (residence != ncclScalarDevice && residence != ncclScalarHostImmediate))
        {
            return ncclInvalidArgument;
        }
        std::lock_guard lock(c->stateMutex);
        if (c->nextCustomOp == ncclMaxRedOp)
        {
            return ncclInvalidUsage;
        }
        const int id = c->nextCustomOp++;
        c->customOps.insert(id);
        *op = static_cast<ncclRedOp_t>(id);
        return ncclSuccess;
    }

    ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
    {
        ncclComm* c = Communicators().Find(comm);
        if (!c)
        {
            return ncclInvalidArgument;
        }
        std::lock_guard lock(c->stateMutex);
        return c->customOps.erase(static_cast<int>(op)) ? ncclSuccess : ncclInvalidArgument;
    }

    // NCCL runs gather and scatter as grouped sends and receives between the root and
    // every other rank, with a local copy of the root's own part: so are they here.
    ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
    {
        HookScope scope;
        ncclComm* c = Communicators().Find(comm);
        const size_t elem = NcclTypeSize(datatype);
        if (!c || elem == 0 || root < 0 || root >= c->nranks)
        {
            return ncclInvalidArgument;
        }
        const size_t bytes = count * elem;
        if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess)
        {
            return r;
        }
        ncclResult_t result = ncclSuccess;
        if (c->rank == root)
        {
            for (int peer = 0; peer < c->nranks && result == ncclSuccess; ++peer)
            {
                char* part = static_cast<char*>(recvbuff) + peer * bytes;
                if (peer != root)
                {
                    result = ncclRecv(part, count, datatype, peer, comm, stream);
                }
                else if (part != sendbuff && bytes > 0 &&
                         cudaMemcpyAsync(part, sendbuff, bytes, cudaMemcpyDeviceToDevice, stream) !=
                             cudaSuccess)
                {
                    result = ncclUnhandledCudaError;
                }
            }
        }
        else
        {
            result = ncclSend(sendbuff, count, datatype, root, comm, stream);
        }
        const ncclResult_t ended = ncclGroupEnd();
        return result != ncclSuccess ? result : ended;
    }

    ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                             ncclDataType_t datatype, int root, ncclComm_t comm,
                             cudaStream_t stream)
    {
        HookScope scope;
        ncclComm* c = Communicators().Find(comm);
        const size_t elem = NcclTypeSize(datatype);
        if (!c || elem == 0 || root < 0 || root >= c->nranks)
        {
            return ncclInvalidArgument;
        }
        const size_t bytes = count * elem;
        if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess)
        {
            return r;
        }
        ncclResult_t result = ncclSuccess;
        if (c->rank == root)
        {
            for (int peer = 0; peer < c->nranks && result == ncclSuccess; ++peer)
            {
                const char* part = static_cast<const char*>(sendbuff) + peer * bytes;
                if (peer != root)
                {
                    result = ncclSend(part, count, datatype, peer, comm, stream);
                }
                else if (part != recvbuff && bytes > 0 &&
                         cudaMemcpyAsync(recvbuff, part, bytes, cudaMemcpyDeviceToDevice, stream) !=
                             cudaSuccess)
                {
                    result = ncclUnhandledCudaError;
                }
            }
        }
        else
        {
            result = ncclRecv(recvbuff, count, datatype, root, comm, stream);
        }
        const ncclResult_t ended = ncclGroupEnd();
        return result != ncclSuccess ? result : ended;
    }

} // extern "C"

PHANTORA_PNCCL_ALIAS(ncclCommInitRankScalable)
PHANTORA_PNCCL_ALIAS(ncclCommShrink)
PHANTORA_PNCCL_ALIAS(ncclCommRegister)
PHANTORA_PNCCL_ALIAS(ncclCommDeregister)
PHANTORA_PNCCL_ALIAS(ncclMemAlloc)
PHANTORA_PNCCL_ALIAS(ncclMemFree)
PHANTORA_PNCCL_ALIAS(ncclRedOpCreatePreMulSum)
PHANTORA_PNCCL_ALIAS(ncclRedOpDestroy)
PHANTORA_PNCCL_ALIAS(ncclGather)
PHANTORA_PNCCL_ALIAS(ncclScatter)
