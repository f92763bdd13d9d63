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
#include <tuple>
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

/// Pairs up NCCL sends and receives.  A rank's k-th send to a peer on a
/// communicator is the peer's k-th receive from it, as in NCCL.  The sends and
/// receives one call (or one group) issued on a stream form a batch that ends when
/// its last transfer has; a transfer starts once both ranks' streams reached the
/// batches holding it.
class P2PMatcher
{
public:
    /// One matched send/recv; \p from and \p to are communicator ranks.
    struct Transfer
    {
        const Communicator* comm{nullptr};
        int from{0};
        int to{0};
        uint64_t bytes{0};
        int64_t startNs{0};
        uint64_t sequence{0}; ///< among sends from \p from to \p to on the communicator
        /// The larger of the two sides' batches: operations, and bytes it sends in all.
        uint32_t groupOps{1};
        uint64_t groupBytes{0};
    };
    /// Runs \p t and calls the function it is given with its end.
    using StartFn = std::function<void(const Transfer& t, std::function<void(int64_t)> done)>;
    /// The batch \p ticket of global rank \p rank ended at \p endNs.
    using DoneFn = std::function<void(int rank, uint64_t ticket, int64_t endNs)>;

    struct Op
    {
        int peer{0};
        uint64_t bytes{0};
        bool send{false};
        uint64_t sequence{0}; ///< among this rank's operations with that peer in that direction
    };

    P2PMatcher(StartFn start, DoneFn done);

    /// Numbers member \p member's \p op in the order the program issued it; throws
    /// CollectiveError for a peer outside the communicator.
    Op Number(const Communicator& comm, int member, const wire::P2POp& op);

    /// Member \p member's stream reached batch \p ticket holding \p ops at \p readyNs.
    void Ready(const Communicator& comm, int member, uint64_t ticket, const std::vector<Op>& ops,
               int64_t readyNs);

    /// Sends and receives one side has reached and the other has not, for diagnostics.
    std::vector<std::string> Incomplete() const;

private:
    struct Side
    {
        uint64_t ticket{0};
        uint64_t bytes{0};
        int64_t readyNs{0};
        uint32_t groupOps{1};
        uint64_t groupBytes{0};
    };
    struct Pair
    {
        const Communicator* comm{nullptr};
        std::optional<Side> send;
        std::optional<Side> recv;
    };
    struct Batch
    {
        int rank{0};
        std::size_t remaining{0};
        int64_t endNs{0};
    };
    /// (comm, from, to, sequence)
    using Key = std::tuple<uint64_t, int, int, uint64_t>;

    void TransferDone(uint64_t ticket, int64_t endNs);

    StartFn m_start;
    DoneFn m_done;
    std::map<Key, Pair> m_open;
    std::map<uint64_t, Batch> m_batches;
    /// (comm, from, to, send?) -> operations numbered so far
    std::map<std::tuple<uint64_t, int, int, bool>, uint64_t> m_counts;
};

} // namespace phantora
