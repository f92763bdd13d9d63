// What the bridge knows about one rank.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace phantora
{

enum class RankPhase
{
    NotConnected, ///< started, has not made an intercepted call yet
    Running,      ///< on the CPU; will not send anything earlier than clockNs
    Waiting,      ///< (reports only) every thread waits for the bridge or in the host
    Finished,     ///< said goodbye; its clock is final
    Exited,       ///< the process is gone
    Folded,       ///< absent: a live rank stands for it (engine/fold_layout.h)
};

/// How reports and diagnostics name a rank's phase.
inline const char* RankPhaseName(RankPhase p)
{
    switch (p)
    {
    case RankPhase::NotConnected:
        return "never connected";
    case RankPhase::Running:
        return "running";
    case RankPhase::Waiting:
        return "waiting";
    case RankPhase::Finished:
        return "finished";
    case RankPhase::Exited:
        return "exited";
    case RankPhase::Folded:
        return "folded";
    }
    return "?";
}

/// A blocked call and what it waits for.
struct PendingWait
{
    enum class Kind
    {
        Stream,           ///< cudaStreamSynchronize and blocking copies
        Device,           ///< cudaDeviceSynchronize
        CommInit,         ///< ncclCommInitRank until every member joined
        EventSync,        ///< cudaEventSynchronize: until the record is done
        EventQuery,       ///< cudaEventQuery: until it is known whether the record is done
        EventElapsed,     ///< cudaEventElapsedTime: until both records are known
        CollectiveValues, ///< until every member issued the collective (clock stays)
        P2PValues,        ///< until the peer issued the matching send (clock stays)
    };
    Kind kind{Kind::Stream};
    uint32_t lane{0}; ///< the thread that waits
    uint64_t seq{0};
    uint64_t stream{0};
    int64_t callNs{0};
    uint64_t record{0};    ///< Event*: the record waited for (EventElapsed: the start)
    uint64_t endRecord{0}; ///< EventElapsed: the end record
    uint64_t comm{0};      ///< *Values: the communicator
    uint64_t sequence{0};  ///< CollectiveValues: the caller's collective number on it;
                           ///< P2PValues: its receive number from peer
    int peer{0};           ///< P2PValues: the sender's communicator rank
    std::string call;      ///< for diagnostics: the call that blocks
};

/// One thread of a rank that talks to the bridge (see interposer/thread_handoff.cc).
struct LaneState
{
    enum class Phase
    {
        Running,     ///< may send anything at or after clockNs
        Waiting,     ///< blocked in a call until the bridge answers (wait)
        HostBlocked, ///< blocked in a host wait: sends nothing until woken (or deadlineNs)
        Gone,        ///< the thread ended
    };
    Phase phase{Phase::Running};
    int64_t clockNs{0};
    int64_t deadlineNs{-1}; ///< HostBlocked: when a timed wait ends on its own (-1: never)
    /// HostBlocked by BlockOutside: another process ends the wait, so the rank is not
    /// stuck even when every thread the bridge sees waits.
    bool outside{false};
    std::optional<PendingWait> wait;
};

/// How many operations of one kind a rank issued on one communicator, and their bytes.
struct CollectiveTally
{
    uint64_t count{0};
    uint64_t bytes{0}; ///< the rank's buffer size per call (a send/recv op: its message)
};

struct RankState
{
    RankPhase phase{RankPhase::NotConnected};
    int64_t clockNs{0}; ///< the latest clock any of its threads reported
    int pid{0};
    std::map<uint32_t, LaneState> lanes;
    /// Wakes of blocked threads not yet taken up: the waker's clock as the rank knows it
    /// -> the instant the woken thread resumes at (later if simulated time had moved
    /// past the waker's clock), which it holds simulated time at until taken up.
    std::multimap<int64_t, int64_t> pendingWakes;
    uint64_t liftedLanes{0}; ///< threads that started or woke behind the network, lifted to it
    std::string lastCall{"(none)"};
    uint64_t kernels{0};
    uint64_t copies{0};
    uint64_t collectives{0};
    /// Kernels, copies and collectives issued as nodes of replayed CUDA graphs (counted
    /// in the above as well).
    uint64_t graphNodes{0};
    /// By (operation name, the communicator's global ranks): collectives by NCCL's name
    /// ("all_reduce"), point-to-point by "send" and "recv"; for the report, so that a
    /// parallel layout can be checked against what the program issued on which group.
    std::map<std::pair<std::string, std::vector<int>>, CollectiveTally> tally;
    uint64_t peakDeviceBytes{0};
    /// Host time its threads were charged between GPU calls, by host_time::Source (from
    /// its goodbye).
    std::array<int64_t, 6> hostTimeNs{};
    std::array<uint64_t, 6> hostTimeGaps{};
    /// Its small device-to-host reads served from the recording, and read as zeros.
    uint64_t readbacksServed{0};
    uint64_t readbacksZeros{0};
    bool saidGoodbye{false};
};

} // namespace phantora
