// The collectives NCCL offers.  One enum for the whole simulator: the interposer puts
// it on the wire (protocol/messages.h calls it wire::CollectiveOp), the bridge matches
// members' calls by it, and the NCCL model plans by it.  Header-only, so that the
// protocol can use it without linking the model.
#pragma once

#include <cstdint>

namespace phantora::nccl
{

/// Byte counts follow nccl-tests' convention.  The values are part of the wire format
/// (a uint8_t on the wire): never renumber them.
enum class CollectiveKind : uint8_t
{
    AllReduce = 0,
    AllGather = 1,     ///< bytes = the whole output buffer (nccl-tests' size)
    ReduceScatter = 2, ///< bytes = the whole input buffer (nccl-tests' size)
    Broadcast = 3,     ///< the planner puts the root at plan rank 0
    Reduce = 4,        ///< the planner puts the root at plan rank 0
    AllToAll = 5,      ///< bytes = one rank's send buffer; 1/n of it goes to each rank
    /// Rank 0 sends bytes to rank 1.  Only the planner uses it: point-to-point
    /// operations travel on the wire as NcclP2P, not as a collective.
    SendRecv = 6,
};

/// nccl-tests' name of \p kind ("all_reduce", ...).
constexpr const char* CollectiveName(CollectiveKind kind)
{
    switch (kind)
    {
    case CollectiveKind::AllReduce:
        return "all_reduce";
    case CollectiveKind::AllGather:
        return "all_gather";
    case CollectiveKind::ReduceScatter:
        return "reduce_scatter";
    case CollectiveKind::Broadcast:
        return "broadcast";
    case CollectiveKind::Reduce:
        return "reduce";
    case CollectiveKind::AllToAll:
        return "all_to_all";
    case CollectiveKind::SendRecv:
        return "send_recv";
    }
    return "collective";
}

} // namespace phantora::nccl
