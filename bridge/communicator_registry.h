// The communicators of a run: created when every member has called ncclCommInitRank,
// split when every member of the parent has called ncclCommSplit.
#pragma once

#include "communicator.h"
#include "protocol/messages.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace phantora
{

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

} // namespace phantora
