// The object an ncclComm_t points at, and the table of live communicators: shared by
// the hook files of NCCL's classic API (nccl_hooks.cc) and of its later additions
// (nccl_extension_hooks.cc).  NCCL's own struct is opaque to programs.
#pragma once

#include "handle_table.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nccl.h>
#include <set>

struct ncclComm
{
    uint64_t handle;
    int nranks;
    int rank;
    int device;
    /// Collectives issued on it so far (the bridge numbers them the same way).
    std::atomic<uint64_t> collectives{0};
    /// Receives issued so far, by peer: the k-th receive from a peer matches its k-th
    /// send to this rank (the bridge numbers them the same way).
    std::mutex recvMutex;
    std::map<int, uint64_t> recvs;
    /// ncclCommShrink calls made on it so far: members shrink in the same order, so the
    /// k-th shrink of every survivor names the same new communicator.
    std::atomic<uint64_t> shrinks{0};
    /// Reduction operations made on it by ncclRedOpCreatePreMulSum and not destroyed,
    /// and the buffers ncclCommRegister registered on it (handle -> bytes).
    std::mutex stateMutex;
    std::set<int> customOps;
    int nextCustomOp{ncclNumOps};
    std::map<uintptr_t, std::size_t> registrations;
};

namespace phantora::interposer
{

/// The live communicators, by the handle the program holds.
HandleTable<ncclComm_t, ncclComm>& Communicators();

/// Bytes of one element of \p t; 0 for a type NCCL does not have.
std::size_t NcclTypeSize(ncclDataType_t t);

/// Whether \p op may be passed to a collective on \p comm: a built-in operation, or
/// one ncclRedOpCreatePreMulSum made on it and not yet destroyed.
bool ValidRedOp(ncclComm& comm, ncclRedOp_t op);

} // namespace phantora::interposer

/// The profiling interface's name of a hook (pnccl*, as libnccl.so exports both): the
/// same function under the second name.
#define PHANTORA_PNCCL_ALIAS(name) extern "C" decltype(name) p##name __attribute__((alias(#name)));
