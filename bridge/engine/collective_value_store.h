// The bytes members sent with small collectives (wire::NcclCollective::values), kept
// until each member that sent them has read its result: computed once, when the first
// member asks, from every member's send buffer (collective_values.h).
#pragma once

#include "protocol/messages.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace phantora
{

class CollectiveValueStore
{
public:
    /// Member \p member of a communicator of \p commSize ranks issued its collective
    /// \p sequence on \p comm with its send buffer's bytes.  The first member to do so
    /// fixes the operation; a member whose call disagrees with it is left out.  A member
    /// that will not read the result (an absent rank's bytes, offered by the live rank
    /// standing for it) is offered with \p reads false.
    void Offer(uint64_t comm, uint64_t sequence, std::size_t commSize, int member,
               const wire::NcclCollective& m, bool reads = true);
    /// Some member offered values for the collective and not all of them have read it.
    bool Holds(uint64_t comm, uint64_t sequence) const;
    /// Member \p member's result of the collective (Holds() must be true); unknown when
    /// not every member sent values.  Call once every member issued it.
    wire::CollectiveResult Take(uint64_t comm, uint64_t sequence, int member);

private:
    /// A collective some member sent its send buffer's bytes for (small buffers only).
    struct ValueSlot
    {
        wire::CollectiveOp op{wire::CollectiveOp::AllReduce};
        wire::DataType type{wire::DataType::Uint8};
        wire::RedOp redOp{wire::RedOp::Sum};
        int root{0};
        std::vector<std::optional<std::string>> inputs;  ///< per member; nullopt: none sent
        std::vector<std::optional<std::string>> results; ///< per member, once computed
        bool computed{false};
        int unfetched{0}; ///< members that sent values and did not ask for the result yet
    };
    std::map<std::pair<uint64_t, uint64_t>, ValueSlot> m_values; ///< (comm, sequence)
};

} // namespace phantora
