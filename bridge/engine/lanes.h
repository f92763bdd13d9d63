// Every rank's threads (lanes) as the engine sees them: their clocks, their host waits
// and the wakes between them, and the calls they block in until the engine answers.
// Simulated time a thread holds back is read from here by the commit policy.
#pragma once

#include "engine/rank_state.h"
#include "engine/request_context.h"
#include "protocol/messages.h"
#include "trace_recorder.h"

#include <cstdint>
#include <vector>

namespace phantora
{

class Lanes
{
public:
    /// \p trace, when given, receives every blocking call as a span on its thread's track.
    Lanes(int worldSize, TraceRecorder* trace);

    /// Throws SimulationError for a rank outside the world.
    RankState& Rank(int rank);
    const std::vector<RankState>& Ranks() const { return m_ranks; }
    int WorldSize() const { return static_cast<int>(m_ranks.size()); }

    /// Where the sending thread is: its clock moves to the request's, a thread nobody
    /// announced is added, and a thread that may not send now is refused.  Nothing
    /// before \p committedNs can change any more (a thread found behind it is lifted).
    RequestContext Enter(int rank, const wire::RequestEnvelope& req, int64_t committedNs,
                         std::vector<OutgoingReply>& out);
    /// A thread started, blocked or woke in the host, or gave another a wake.
    void OnHostEvent(const RequestContext& ctx, const wire::HostEvent& m, int64_t committedNs);

    /// The request's thread blocks until the engine answers; \p wait gets the request's
    /// number, thread and clock.
    void Block(const RequestContext& ctx, PendingWait wait);
    /// Ends the thread's wait with wire::Resume at \p atNs, or later if its clock is.
    void Resume(int rank, uint32_t lane, int64_t atNs, std::vector<OutgoingReply>& out);
    /// Ends the thread's wait with \p reply at its current clock.
    void Answer(int rank, uint32_t lane, wire::Reply reply, std::vector<OutgoingReply>& out);

private:
    /// The thread leaves its blocking call at \p atNs: its CPU track gets the span.
    void Release(int rank, uint32_t lane, int64_t atNs);

    std::vector<RankState> m_ranks;
    TraceRecorder* m_trace;
};

} // namespace phantora
