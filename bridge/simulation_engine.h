// The bridge's logic without any I/O: it takes the ranks' requests, keeps their
// GPU timelines, pairs up their collectives, runs them on the network and
// decides when a waiting rank may be answered.
//
// Synchronisation (DESIGN.md, "checkpoint-and-replay, committed answers only"): the
// network runs ahead of the ranks on whatever collectives it knows of (optimistic
// mode) and replays from a checkpoint when one turns up that starts in its past (see
// NetworkModel).  The timelines only ever hear of a collective's end once it is final:
// when no thread of any rank can still send anything that starts before it (the
// global virtual time, SendBound()).  So every answer a rank gets is final, and the
// simulated timeline does not depend on how fast each rank runs.  Conservative mode
// keeps the network itself from running past that bound.
#pragma once

#include "collective_matcher.h"
#include "communicator_registry.h"
#include "device_timeline.h"
#include "kernel_cost_table.h"
#include "network_model.h"
#include "p2p_matcher.h"
#include "protocol/messages.h"
#include "rank_state.h"
#include "scenario.h"
#include "trace_recorder.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
    uint32_t lane{0}; ///< the rank's thread that waits for it
};

enum class SyncMode
{
    Optimistic,   ///< the network runs ahead and replays past events
    Conservative, ///< the network never runs past what the ranks could still change
};

class SimulationEngine
{
public:
    /// \p trace, when given, receives every op and every blocking call as a span.
    SimulationEngine(const Scenario& scenario, int worldSize, TraceRecorder* trace = nullptr,
                     SyncMode mode = SyncMode::Optimistic);

    /// A request from \p rank (already authenticated).  Replies that can be given at
    /// once are appended to \p out.
    void Handle(int rank, const wire::RequestEnvelope& request, std::vector<OutgoingReply>& out);

    /// The process of \p rank is gone.
    void RankExited(int rank);

    /// Runs the network as far as it is safe and answers every rank whose answer is
    /// final.  Throws SimulationError when ranks wait for something that cannot come.
    void Progress(std::vector<OutgoingReply>& out);

    bool AllDone() const;
    /// The network has work it could do now: call Progress again without waiting for
    /// a message.
    bool WantsProgress() const { return m_moreToDo; }
    bool Optimistic() const { return m_mode == SyncMode::Optimistic; }
    /// Every collective ending up to here is final and known to the timelines.
    int64_t CommittedNs() const { return m_committedNs; }
    const std::vector<RankState>& Ranks() const { return m_ranks; }
    const DeviceTimeline& Timeline(int rank) const
    {
        return m_timelines.at(static_cast<std::size_t>(rank));
    }
    const KernelCostTable& Kernels() const { return m_kernels; }
    /// The simulated program's name (profile::ProgramName): its own measurements are
    /// preferred where the profile holds several programs' (KernelCostTable::PreferProgram).
    void PreferProfileProgram(std::string program) { m_kernels.PreferProgram(std::move(program)); }
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
    void OnP2P(int rank, const wire::NcclP2P& m);
    /// Runs one matched send/recv pair on the network.
    void StartTransfer(const P2PMatcher::Transfer& t, std::function<void(int64_t)> done);
    /// Threads: where the sending thread is, and its host waits and wakes.
    LaneState& EnterLane(int rank, const wire::RequestEnvelope& req);
    void OnHostEvent(int rank, const wire::HostEvent& m);
    /// Host functions on streams: the stream holds until the rank ran it.
    void OnHostFunction(int rank, const wire::HostFunction& m);
    void OnHostFunctionDone(int rank, const wire::HostFunctionDone& m);
    /// Ends host function \p key's hold once its stream reached it and it returned.
    void MaybeEndHostFunction(std::pair<int, uint64_t> key);
    void StartMatched(const MatchedCollective& c);
    /// The NCCL plan the scenario's [nccl] table gives \p op over \p bytes on \p nRanks ranks.
    nccl::Plan PlanFor(wire::CollectiveOp op, const Communicator& comm, uint64_t bytes) const;
    /// Fixes the NCCL settings of each communicator among \p members from the tuning
    /// variables its ranks had at creation (they must agree, as NCCL requires).
    void SettleNcclConfig(const std::vector<std::pair<int, const Communicator*>>& members);
    /// The scenario's [nccl] table with the communicator's NCCL_* variables applied.
    const nccl::Config& NcclFor(const Communicator& comm) const;
    /// The thread whose request is being handled blocks until the bridge answers.
    void Block(int rank, PendingWait wait);
    /// The thread leaves its blocking call at \p atNs: its CPU track gets the span.
    void Release(int rank, uint32_t lane, int64_t atNs);
    void Resume(int rank, uint32_t lane, int64_t atNs, std::vector<OutgoingReply>& out);
    /// Ends the thread's wait with \p reply at its current clock.
    void Answer(int rank, uint32_t lane, wire::Reply reply, std::vector<OutgoingReply>& out);
    /// Answers every waiting rank whose answer is now known.
    void AnswerWaits(std::vector<OutgoingReply>& out);
    int64_t Horizon() const;
    /// The global virtual time: nothing any rank sends from now on starts on the GPU or
    /// the network before it.  \p except (a waiting query) is left out.
    int64_t SendBound(const LaneState* except = nullptr) const;
    /// Hands the timelines the earliest network completion if it is final.
    bool CommitOne();
    /// Whether everything up to \p ns is final for \p lane, which queries at \p ns.
    bool SettledThrough(int64_t ns, const LaneState& lane) const;
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
    P2PMatcher m_p2p;
    struct HostFunctionHold
    {
        uint64_t ticket{0};
        std::optional<int64_t> readyNs; ///< when its stream reached it
        std::optional<int64_t> doneNs;  ///< when it returned
    };
    std::map<std::pair<int, uint64_t>, HostFunctionHold> m_hostFunctions; ///< (rank, id)
    std::map<int, wire::NcclTuningEnv> m_creationTuning; ///< rank -> its communicator call's
    std::map<uint64_t, nccl::Config> m_commNccl;         ///< communicator handle -> settings
    uint32_t m_lane{0};  ///< Handle(): the thread that sent the request
    int64_t m_now{0};    ///< Handle(): that thread's clock
    int64_t m_sentNs{0}; ///< Handle(): the clock the request carried
    std::map<std::pair<uint64_t, int>, uint64_t> m_collectiveSeq; ///< (comm, rank) -> next number
    /// A collective some member sent its send buffer's bytes for (small buffers only).
    struct ValueSlot
    {
        wire::CollectiveOp op{wire::CollectiveOp::AllReduce};
        wire::DataType type{wire::DataType::Uint8};
        wire::RedOp redOp{wire::RedOp::Sum};
        int root{0};
        std::vector<std::optional<std::string>> inputs;  ///< per member; nullopt: none sent
        std::vector<std::optional<std::string>> results; ///< per member, once computed
        bool computed{false};
        int unfetched{0}; ///< members that sent values and did not ask for the result yet
    };
    std::map<std::pair<uint64_t, uint64_t>, ValueSlot> m_values; ///< (comm, sequence)
    /// Answers a CollectiveValues wait if every member issued the collective.
    bool AnswerValues(int rank, uint32_t lane, const PendingWait& w,
                      std::vector<OutgoingReply>& out);
    uint64_t m_nextTicket{1};
    /// Collective ticket -> (rank, that rank's collective number): orders collectives that
    /// start at one instant independently of message arrival.
    std::map<uint64_t, NetworkModel::OrderKey> m_ticketOrder;
    TraceRecorder* m_trace;
    SyncMode m_mode;
    int64_t m_committedNs{0};
    bool m_moreToDo{false};
    bool m_settleQueries{false}; ///< AnswerWaits may answer "not done" (see Progress)
};

} // namespace phantora
