// Host functions on streams (cudaLaunchHostFunc): the stream holds like at a
// collective until the rank has run the function, so ops behind it start at the later
// of the instant the stream reached it and the instant it returned.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

namespace phantora
{

class HostFunctionHolds
{
public:
    /// Ends the hold of \p rank's stream op \p ticket at \p endNs.
    using EndFn = std::function<void(int rank, uint64_t ticket, int64_t endNs)>;

    explicit HostFunctionHolds(EndFn end);

    /// \p rank launched host function \p id, held on its stream as op \p ticket.
    void Hold(int rank, uint64_t id, uint64_t ticket);
    /// Its stream reached it at \p readyNs.
    void Ready(int rank, uint64_t id, int64_t readyNs);
    /// It returned at \p doneNs.  Throws SimulationError for one never launched (or
    /// already returned).
    void Done(int rank, uint64_t id, int64_t doneNs);

private:
    struct HeldFunction
    {
        uint64_t ticket{0};
        std::optional<int64_t> readyNs; ///< when its stream reached it
        std::optional<int64_t> doneNs;  ///< when it returned
    };
    using Key = std::pair<int, uint64_t>; ///< (rank, id)

    /// Ends host function \p key's hold once its stream reached it and it returned.
    void MaybeEnd(Key key);

    EndFn m_end;
    std::map<Key, HeldFunction> m_holds;
};

} // namespace phantora
