// NCCL communicators as the bridge sees them: which ranks belong, in which order,
// and the collectives each member has issued.  The k-th collective a member calls
// on a communicator is the same collective as every other member's k-th one, as
// in NCCL; it starts when the last member's stream reaches it.
#pragma once

#include "protocol/messages.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace phantora
{

/// The program used NCCL in a way that would hang or fail on a real cluster.
class CollectiveError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

struct Communicator
{
    uint64_t handle{0};
    std::vector<int> ranks; ///< communicator rank -> global rank
};

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

class CommunicatorRegistry
{
public:
    struct Joined
    {
        const Communicator* comm;
        std::vector<int> waitingRanks; ///< every global rank that called init, to be answered
    };

    /// A member's ncclCommInitRank.  Returns the communicator once all nranks have joined.
    std::optional<Joined> Join(const wire::NcclId& id, int nranks, int commRank, int globalRank);

    /// A member's ncclCommSplit of \p parent.  Once every member of the parent has
    /// called it, returns each member's new communicator (nullptr: no color).
    struct SplitResult
    {
        std::vector<std::pair<int, const Communicator*>> members; ///< global rank -> comm
    };
    std::optional<SplitResult> Split(const Communicator& parent, int globalRank, int color,
                                     int key);

    const Communicator& Get(uint64_t handle) const;
    /// The communicator rank of \p globalRank in \p comm; throws if not a member.
    int MemberIndex(const Communicator& comm, int globalRank) const;

    /// Ranks that called init on a communicator that is not complete yet, for diagnostics.
    std::vector<std::string> PendingInits() const;

private:
    struct PendingInit
    {
        int nranks{0};
        std::vector<int> members; ///< communicator rank -> global rank, -1 while absent
        int joined{0};
    };

    struct PendingSplit
    {
        std::map<int, std::pair<int, int>> calls; ///< parent member index -> (color, key)
    };

    const Communicator& Add(std::vector<int> ranks);

    std::map<wire::NcclId, PendingInit> m_pending;
    /// (parent, split number) -> calls so far; each member's k-th split is the same split
    std::map<std::pair<uint64_t, uint64_t>, PendingSplit> m_splits;
    std::map<std::pair<uint64_t, int>, uint64_t> m_splitCount; ///< (parent, rank) -> splits
    std::map<uint64_t, Communicator> m_comms;
    uint64_t m_nextHandle{1};
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

const char* CollectiveName(wire::CollectiveOp op);

} // namespace phantora
