#include "engine/collective_name.h"

namespace phantora
{

const char* CollectiveName(wire::CollectiveOp op)
{
    switch (op)
    {
    case wire::CollectiveOp::AllReduce:
        return "all_reduce";
    case wire::CollectiveOp::AllGather:
        return "all_gather";
    case wire::CollectiveOp::ReduceScatter:
        return "reduce_scatter";
    case wire::CollectiveOp::Broadcast:
        return "broadcast";
    case wire::CollectiveOp::Reduce:
        return "reduce";
    case wire::CollectiveOp::AllToAll:
        return "all_to_all";
    }
    return "collective";
}

} // namespace phantora
