// NCCL sends and receives, paired up across ranks.
#pragma once

#include "communicator.h"
#include "protocol/messages.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace phantora
{

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
