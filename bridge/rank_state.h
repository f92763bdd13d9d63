// What the bridge knows about one rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace phantora
{

enum class RankPhase
{
    NotConnected, ///< started, has not made an intercepted call yet
    Running,      ///< on the CPU; will not send anything earlier than clockNs
    Waiting,      ///< blocked in a call until the bridge answers
    Finished,     ///< said goodbye; its clock is final
    Exited,       ///< the process is gone
};

/// A blocked call and what it waits for.
struct PendingWait
{
    enum class Kind
    {
        Stream,       ///< cudaStreamSynchronize and blocking copies
        Device,       ///< cudaDeviceSynchronize
        CommInit,     ///< ncclCommInitRank until every member joined
        EventSync,    ///< cudaEventSynchronize: until the record is done
        EventQuery,   ///< cudaEventQuery: until it is known whether the record is done
        EventElapsed, ///< cudaEventElapsedTime: until both records are known
    };
    Kind kind{Kind::Stream};
    uint64_t seq{0};
    uint64_t stream{0};
    int64_t callNs{0};
    uint64_t record{0};    ///< Event*: the record waited for (EventElapsed: the start)
    uint64_t endRecord{0}; ///< EventElapsed: the end record
    std::string call;      ///< for diagnostics: the call that blocks
};

struct RankState
{
    RankPhase phase{RankPhase::NotConnected};
    int64_t clockNs{0};
    int pid{0};
    std::optional<PendingWait> wait;
    std::string lastCall{"(none)"};
    uint64_t kernels{0};
    uint64_t copies{0};
    uint64_t collectives{0};
    uint64_t peakDeviceBytes{0};
    bool saidGoodbye{false};
};

} // namespace phantora
