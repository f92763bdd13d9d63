// When a network completion becomes final (DESIGN.md, "checkpoint-and-replay, committed
// answers only"): the timelines only ever hear of a collective's end once no thread of
// any rank can still send anything that starts before it (the global virtual time,
// SendBound()).  So every answer a rank gets is final, and the simulated timeline does
// not depend on how fast each rank runs.  Conservative mode keeps the network itself
// from running past that bound.
#pragma once

#include "engine/collective_launch.h"
#include "engine/communicator_registry.h"
#include "engine/rank_state.h"
#include "network_model.h"
#include "trace_recorder.h"

#include <cstdint>
#include <vector>

namespace phantora
{

enum class SyncMode
{
    Optimistic,   ///< the network runs ahead and replays past events
    Conservative, ///< the network never runs past what the ranks could still change
};

class CommitPolicy
{
public:
    /// Reads the threads' clocks and waits from \p ranks, and which member issued which
    /// collective from \p comms and \p launch; whatever a rank enqueues starts on the GPU
    /// \p launchLatencyNs after its clock.  \p trace, when given, receives each committed
    /// collective's flows.
    CommitPolicy(const std::vector<RankState>& ranks, const CommunicatorRegistry& comms,
                 const CollectiveLaunch& launch, NetworkModel& network, int64_t launchLatencyNs,
                 SyncMode mode, TraceRecorder* trace);

    /// The earliest instant any thread of any rank could still send something at.
    int64_t Horizon() const;
    /// The global virtual time: nothing any rank sends from now on starts on the GPU or
    /// the network before it.  \p except (a waiting query) is left out.
    int64_t SendBound(const LaneState* except = nullptr) const;
    /// Whether everything up to \p ns is final for \p lane, which queries at \p ns.
    bool SettledThrough(int64_t ns, const LaneState& lane) const;
    /// Hands the timelines the earliest network completion if it is final.
    bool CommitOne();
    /// How far the network may simulate now.
    int64_t AdvanceLimit() const;
    /// The earliest clock at which \p rank could still issue anything: its running
    /// threads' clocks, its waiting threads' (they resume no earlier), timed host waits'
    /// deadlines and untaken wakes.  kForever for a rank that can issue nothing more.
    int64_t IssueBound(int rank) const;
    /// Where a thread reading the values of collective \p sequence on \p comm, blocked at
    /// \p callNs, resumes: no earlier than the last member issued it (the value does not
    /// exist before), so while members have not, no earlier than they still could.
    int64_t ValuesResumeBound(uint64_t comm, uint64_t sequence, int64_t callNs) const;
    /// Where a thread of \p rank reading the bytes of its receive \p sequence from
    /// communicator rank \p peer on \p comm, blocked at \p callNs, resumes: no earlier
    /// than the peer issued the send, or than it still could.
    int64_t P2PValuesResumeBound(int rank, uint64_t comm, int peer, uint64_t sequence,
                                 int64_t callNs) const;

    bool Optimistic() const { return m_mode == SyncMode::Optimistic; }
    /// Every collective ending up to here is final and known to the timelines.
    int64_t CommittedNs() const { return m_committedNs; }

private:
    const std::vector<RankState>& m_ranks;
    const CommunicatorRegistry& m_comms;
    const CollectiveLaunch& m_launch;
    NetworkModel& m_network;
    int64_t m_launchLatencyNs;
    SyncMode m_mode;
    TraceRecorder* m_trace;
    int64_t m_committedNs{0};
};

} // namespace phantora
