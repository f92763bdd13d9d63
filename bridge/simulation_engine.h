// The bridge's logic without any I/O: it takes the ranks' requests, keeps their
// GPU timelines, pairs up their collectives, runs them on the network and
// decides when a waiting rank may be answered.
//
// Synchronisation is conservative here: the network never runs past the earliest
// instant a running rank could still send an op, so no op ever arrives in the
// network's past and every answer is final when given.
#pragma once

#include "communicators.h"
#include "gpu_timeline.h"
#include "kernel_cost_table.h"
#include "network_model.h"
#include "protocol/messages.h"
#include "rank_state.h"
#include "scenario.h"
#include "trace_recorder.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace phantora
{

/// The simulation cannot go on (deadlock, misuse of NCCL, a bad request).
class SimulationError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

struct OutgoingReply
{
    int rank;
    wire::ReplyEnvelope reply;
};

class SimulationEngine
{
public:
    /// \p trace, when given, receives every op and every blocking call as a span.
    SimulationEngine(const Scenario& scenario, int worldSize, TraceRecorder* trace = nullptr);

    /// A request from \p rank (already authenticated).  Replies that can be given at
    /// once are appended to \p out.
    void Handle(int rank, const wire::RequestEnvelope& request, std::vector<OutgoingReply>& out);

    /// The process of \p rank is gone.
    void RankExited(int rank);

    /// Runs the network as far as it is safe and answers every rank whose answer is
    /// final.  Throws SimulationError when ranks wait for something that cannot come.
    void Progress(std::vector<OutgoingReply>& out);

    bool AllDone() const;
    const std::vector<RankState>& Ranks() const { return m_ranks; }
    const DeviceTimeline& Timeline(int rank) const
    {
        return m_timelines.at(static_cast<std::size_t>(rank));
    }
    const KernelCostTable& Kernels() const { return m_kernels; }
    const NetworkModel& Network() const { return m_network; }
    int WorldSize() const { return static_cast<int>(m_ranks.size()); }

private:
    void OnHello(int rank, const wire::RequestEnvelope& req, const wire::Hello& m,
                 std::vector<OutgoingReply>& out);
    void OnMemcpy(int rank, const wire::RequestEnvelope& req, const wire::Memcpy& m);
    void OnCommInit(int rank, const wire::RequestEnvelope& req, const wire::NcclCommInit& m,
                    std::vector<OutgoingReply>& out);
    void OnCommSplit(int rank, const wire::RequestEnvelope& req, const wire::NcclCommSplit& m,
                     std::vector<OutgoingReply>& out);
    /// Ends the creation of communicators: each member gets its own (or none).
    void LeaveTogether(const std::vector<std::pair<int, const Communicator*>>& members,
                       std::vector<OutgoingReply>& out);
    void OnCollective(int rank, const wire::RequestEnvelope& req, const wire::NcclCollective& m);
    void StartMatched(const MatchedCollective& c);
    /// The NCCL plan the scenario's [nccl] table gives \p op over \p bytes on \p nRanks ranks.
    ns3::NcclPlan PlanFor(wire::CollectiveOp op, uint32_t nRanks, uint64_t bytes) const;
    void Block(int rank, PendingWait wait);
    /// The rank leaves its blocking call at \p atNs: its CPU track gets the span.
    void Release(int rank, int64_t atNs);
    void Resume(int rank, uint64_t seq, int64_t atNs, std::vector<OutgoingReply>& out);
    /// Ends the rank's wait with \p reply at its current clock.
    void Answer(int rank, uint64_t seq, wire::Reply reply, std::vector<OutgoingReply>& out);
    /// Answers every waiting rank whose answer is now known.
    void AnswerWaits(std::vector<OutgoingReply>& out);
    int64_t Horizon() const;
    void CheckDeadlock() const;
    int64_t CopyDurationNs(wire::CopyKind kind, uint64_t bytes) const;
    RankState& Rank(int rank);

    const Scenario& m_scenario;
    NetworkModel m_network;
    KernelCostTable m_kernels;
    std::vector<RankState> m_ranks;
    std::vector<DeviceTimeline> m_timelines;
    CommunicatorRegistry m_comms;
    CollectiveMatcher m_matcher;
    std::map<std::pair<uint64_t, int>, uint64_t> m_collectiveSeq; ///< (comm, rank) -> next number
    uint64_t m_nextTicket{1};
    TraceRecorder* m_trace;
};

} // namespace phantora
