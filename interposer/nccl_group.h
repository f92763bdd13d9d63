// ncclGroupStart/End as one thread sees them.  Point-to-point operations issued inside
// a group are batched by communicator and stream, in the order they first appeared:
// each batch becomes one operation at the outermost ncclGroupEnd, as in NCCL.
// Collectives inside a group are not held here: they reach the bridge as they are
// called (the bridge pairs them per communicator, in order).
#pragma once

#include "protocol/messages.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace phantora::interposer
{

class NcclGroup
{
public:
    /// The calling thread's group state (NCCL's groups are per thread too).
    static NcclGroup& ThisThread();

    void Start() { ++m_depth; }

    /// Whether a group is open: point-to-point operations wait for its end.
    bool Open() const { return m_depth > 0; }

    /// Adds \p op to the batch of \p comm and \p stream (a new batch at the end if none).
    void Add(uint64_t comm, uint64_t stream, const wire::P2POp& op);

    /// Ends one level: the batches to issue now (none unless the outermost level ended),
    /// or nullopt when no group was open.
    std::optional<std::vector<wire::NcclP2P>> End();

private:
    int m_depth{0};
    std::vector<wire::NcclP2P> m_batches;
};

} // namespace phantora::interposer
