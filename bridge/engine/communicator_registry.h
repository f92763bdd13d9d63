// NCCL communicators as the bridge sees them: which ranks belong, in which order.
// A communicator exists once every member called ncclCommInitRank with its id, or
// every member of its parent called ncclCommSplit.
//
// Folded (engine/fold_layout.h): only live members call.  A communicator is complete when
// all its members are live and joined, or when its live members, each with its absent
// replicas, make up all of its ranks in the order torch gives a group's ranks (ascending)
// and no other live rank can still join: at once when it has more ranks than there are
// live processes, else once the simulation would otherwise stand still (ResolveFolded).
#pragma once

#include "engine/fold_layout.h"
#include "protocol/messages.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace phantora
{

struct Communicator
{
    uint64_t handle{0};
    std::vector<int> ranks; ///< communicator rank -> global rank
};

class CommunicatorRegistry
{
public:
    /// \p fold (kept by reference) names the ranks that are absent; none by default.
    explicit CommunicatorRegistry(const FoldLayout& fold = FoldLayout::None());

    struct Joined
    {
        const Communicator* comm;
        std::vector<int> waitingRanks; ///< every global rank that called init, to be answered
    };

    /// Folded: completes every pending init whose live members and their replicas make
    /// up all of its ranks (called when nothing else can move, so no other live rank can
    /// still join one of them).  Empty when there is none.
    std::vector<Joined> ResolveFolded();

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
        std::vector<int> live; ///< members that joined (folded: the only ones that will)
    };

    struct PendingSplit
    {
        std::map<int, std::pair<int, int>> calls; ///< parent member index -> (color, key)
    };

    const Communicator& Add(std::vector<int> ranks);
    /// Folded: the ranks of \p p if its live members with their replicas are all of them,
    /// in order; nullopt while more live members must join; throws CollectiveError when
    /// they cannot be (the layout cannot fold this communicator).
    std::optional<std::vector<int>> SpannedMembers(const PendingInit& p, int globalRank) const;
    Joined Complete(const wire::NcclId& id, std::vector<int> ranks);
    /// Folded: puts the absent members of \p parent into the \p groups (color -> (key,
    /// parent member index)) the live members' colors say they belong to.
    void AddAbsentMembers(const Communicator& parent, int globalRank,
                          std::map<int, std::vector<std::pair<int, int>>>& groups) const;

    const FoldLayout& m_fold;

    std::map<wire::NcclId, PendingInit> m_pending;
    /// (parent, split number) -> calls so far; each member's k-th split is the same split
    std::map<std::pair<uint64_t, uint64_t>, PendingSplit> m_splits;
    std::map<std::pair<uint64_t, int>, uint64_t> m_splitCount; ///< (parent, rank) -> splits
    std::map<uint64_t, Communicator> m_comms;
    uint64_t m_nextHandle{1};
};

} // namespace phantora
