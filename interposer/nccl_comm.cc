#include "nccl_comm.h"

namespace phantora::interposer
{

namespace
{
constinit HandleTable<ncclComm_t, ncclComm> g_comms;
}

HandleTable<ncclComm_t, ncclComm>& Communicators()
{
    return g_comms;
}

std::size_t NcclTypeSize(ncclDataType_t t)
{
    switch (t)
    {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
        return 1;
    case ncclFloat16:
    case ncclBfloat16:
        return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
        return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
        return 8;
    default:
        return 0;
    }
}

bool ValidRedOp(ncclComm& comm, ncclRedOp_t op)
{
    const int value = static_cast<int>(op);
    if (value >= 0 && value < ncclNumOps)
    {
        return true;
    }
    std::lock_guard lock(comm.stateMutex);
    return comm.customOps.count(value) != 0;
}

} // namespace phantora::interposer
