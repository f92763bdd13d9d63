// Collectives and send/recv batches from the ranks' streams onto the network.  Each is
// queued on its rank's timeline as a ticket; once every member's stream reached it
// (paired up by communicators.h) it runs on the network with the plan NCCL would pick,
// ordered among same-instant starts by who issued it, never by message arrival, and its
// end releases the members' streams.  NCCL's choice for a collective (algorithm, protocol,
// channels) is made once, when its first member enqueues it, and carried to its plan.
#pragma once

#include "engine/collective_matcher.h"
#include "engine/communicator_registry.h"
#include "engine/fold_layout.h"
#include "engine/nccl_settings.h"
#include "engine/p2p_matcher.h"
#include "engine/request_context.h"
#include "gpu_model/device_timeline.h"
#include "nccl/plan.h"
#include "nccl/tuning.h"
#include "network_model.h"
#include "protocol/messages.h"
#include "scenario.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace phantora
{

class CollectiveLaunch
{
public:
    /// \p timelines (one per rank) hear when each op may start and when it ended.
    /// Folded (\p fold), an absent member reaches each collective with the live rank
    /// standing for it, and its GPU's traffic runs on the network with the others'.
    CollectiveLaunch(const Scenario& scenario, NetworkModel& network,
                     std::vector<DeviceTimeline>& timelines, const NcclSettings& nccl,
                     const FoldLayout& fold = FoldLayout::None());
    CollectiveLaunch(const CollectiveLaunch&) = delete;
    CollectiveLaunch& operator=(const CollectiveLaunch&) = delete;

    /// A fresh stream-op ticket: collectives, send/recv batches and host functions
    /// share one numbering.
    uint64_t NextTicket() { return m_nextTicket++; }

    /// The communicator ranks of \p comm's absent members \p live stands for.
    const std::vector<int>& AbsentMembersOf(const Communicator& comm, int live);

    /// \p rank's number for its next collective on \p comm (each member's k-th is one
    /// collective).
    uint64_t NumberCollective(uint64_t comm, int rank);
    /// Whether every member of \p comm has issued its collective \p sequence.
    bool AllIssued(const Communicator& comm, uint64_t sequence) const;
    /// Whether member rank \p rank of \p comm has issued its collective \p sequence.
    bool Issued(uint64_t comm, int rank, uint64_t sequence) const;
    /// The latest clock at which a member issued collective \p sequence of \p comm so far
    /// (0 if none did).
    int64_t LastIssueNs(uint64_t comm, uint64_t sequence) const;
    /// Queues member \p member's collective \p sequence on its stream.  \p rankCollectives
    /// (the rank's collectives so far, this one included) orders it among the
    /// collectives starting at one instant.
    void EnqueueCollective(const RequestContext& ctx, const Communicator& comm, int member,
                           uint64_t sequence, const wire::NcclCollective& m,
                           uint64_t rankCollectives);

    /// One call's (or group's) sends and receives, numbered, and the bytes they move.
    struct P2PBatch
    {
        std::vector<P2PMatcher::Op> ops;
        uint64_t bytes{0};
    };
    /// Numbers member \p member's \p ops in the order the program issued them; throws
    /// CollectiveError for a peer outside the communicator.
    P2PBatch NumberP2P(const Communicator& comm, int member, const std::vector<wire::P2POp>& ops);
    /// When communicator rank \p from issued its send \p sequence to \p to on \p comm
    /// (nullopt: not yet).
    std::optional<int64_t> SendIssueNs(uint64_t comm, int from, int to, uint64_t sequence) const;
    /// Queues \p batch on \p stream of the request's rank.
    void EnqueueP2P(const RequestContext& ctx, const Communicator& comm, int member,
                    uint64_t stream, P2PBatch batch);

    /// Collectives and transfers some member has reached and another has not, for
    /// diagnostics.
    std::vector<std::string> Incomplete() const;

private:
    void StartMatched(const MatchedCollective& c);
    /// When a collective that the network runs over [startNs, aloneEndNs) ends on GPUs
    /// \p ranks, whose memory-bound kernels slow it (hbm_share.h): the slowest member's
    /// pace.  Only the network's window counts, whose kernels are all placed once its end
    /// is final; the SMs it holds are counted until that end too, since kernels that start
    /// later may have been placed before it or not, depending on the host's lead.
    int64_t InSituEnd(const std::vector<std::pair<int, uint64_t>>& ranks, int64_t startNs,
                      int64_t aloneEndNs) const;
    /// Runs one matched send/recv pair on the network.
    void StartTransfer(const P2PMatcher::Transfer& t, std::function<void(int64_t)> done);
    /// A communicator of \p nRanks on the scenario's nodes, as the tuning model sees it.
    nccl::CommShape ShapeOf(uint32_t nRanks) const;
    /// The shape NCCL's p2p rule weighs for a send/recv of \p pair on \p comm.
    nccl::CommShape P2PShape(const Communicator& comm, const nccl::CommShape& pair) const;

    /// NCCL's choice for one collective of a communicator, or why NCCL refuses it.
    struct CollectiveChoice
    {
        wire::CollectiveOp op{};
        uint64_t bytes{0};
        std::optional<nccl::Choice> choice; ///< none: NCCL refuses the communicator's settings
        std::string refusal;                ///< why (nccl::Choose's message)
    };
    /// What NCCL picks for \p op over \p bytes on \p comm, by the communicator's settings.
    CollectiveChoice ChoiceFor(wire::CollectiveOp op, const Communicator& comm,
                               uint64_t bytes) const;
    /// The choice for collective \p sequence on \p comm: made when its
    /// first member enqueues it, kept for the plan it starts with (StartMatched).
    CollectiveChoice ChooseOnce(const Communicator& comm, uint64_t sequence, wire::CollectiveOp op,
                                uint64_t bytes);
    /// The SMs (channels) a send/recv kernel moving \p bytes between two ranks of \p comm
    /// holds, and the tuning model's time for it; {0, 0} for a spec NCCL refuses.
    std::pair<uint32_t, int64_t> P2PKernel(const Communicator& comm, uint64_t bytes) const;

    const Scenario& m_scenario;
    NetworkModel& m_network;
    std::vector<DeviceTimeline>& m_timelines;
    const NcclSettings& m_nccl;
    const FoldLayout& m_fold;
    /// (communicator, live rank) -> the communicator ranks of the absent members it
    /// stands for.
    std::map<std::pair<uint64_t, int>, std::vector<int>> m_absentMembers;
    CollectiveMatcher m_matcher;
    P2PMatcher m_p2p;
    uint64_t m_nextTicket{1};
    /// Collective ticket -> (rank, that rank's collective number): orders collectives that
    /// start at one instant independently of message arrival.
    std::map<uint64_t, NetworkModel::OrderKey> m_ticketOrder;
    std::map<std::pair<uint64_t, int>, uint64_t> m_issued; ///< (comm, rank) -> next number
    /// (comm, sequence) -> the latest clock a member issued it at: a rank reading the
    /// collective's values cannot have them before then (WaitAnswers, CommitPolicy).
    std::map<std::pair<uint64_t, uint64_t>, int64_t> m_lastIssueNs;
    /// (comm, sequence) -> NCCL's choice for that collective, from its first member's
    /// enqueue until it starts.
    std::map<std::pair<uint64_t, uint64_t>, CollectiveChoice> m_choices;
    /// (comm, from, to, sequence) -> the clock the send was issued at: a receiver reading
    /// its bytes cannot have them before then.
    std::map<std::tuple<uint64_t, int, int, uint64_t>, int64_t> m_sendIssueNs;
};

} // namespace phantora
