// The collectives each member of a communicator has issued.  The k-th collective a member
// calls on a communicator is the same collective as every other member's k-th one, as in
// NCCL; it starts when the last member's stream reaches it.
#pragma once

#include "communicator.h"
#include "protocol/messages.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace phantora
{

/// One collective, once every member has reached it.
struct MatchedCollective
{
    const Communicator* comm{nullptr};
    uint64_t sequence{0};
    wire::CollectiveOp op{};
    uint64_t bytes{0};
    int root{0};                         ///< communicator rank of the root (broadcast, reduce)
    int64_t startNs{0};                  ///< when the last member's stream is ready
    std::vector<uint64_t> memberTickets; ///< per communicator rank
};

/// Pairs up the members' calls of each collective.
class CollectiveMatcher
{
public:
    using StartFn = std::function<void(const MatchedCollective&)>;

    explicit CollectiveMatcher(StartFn start);

    /// Member \p memberIndex reached its collective number \p sequence on \p comm at \p readyNs.
    void Ready(const Communicator& comm, uint64_t sequence, int memberIndex, wire::CollectiveOp op,
               uint64_t bytes, uint64_t ticket, int64_t readyNs, int root = 0);

    /// Collectives some member has reached and another has not, for diagnostics.
    std::vector<std::string> Incomplete() const;

private:
    struct Instance
    {
        MatchedCollective c;
        std::vector<bool> arrived;
        int count{0};
    };
    StartFn m_start;
    std::map<std::pair<uint64_t, uint64_t>, Instance> m_open;
};

} // namespace phantora
