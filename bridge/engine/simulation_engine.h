// The bridge's logic without any I/O: it takes the ranks' requests, keeps their
// GPU timelines, pairs up their collectives, runs them on the network and
// decides when a waiting rank may be answered.
//
// Synchronisation (DESIGN.md, "checkpoint-and-replay, committed answers only"): the
// network runs ahead of the ranks on whatever collectives it knows of (optimistic
// mode) and replays from a checkpoint when one turns up that starts in its past (see
// NetworkModel).  The timelines only ever hear of a collective's end once it is final
// (CommitPolicy), so every answer a rank gets is final, and the simulated timeline does
// not depend on how fast each rank runs.
//
// The engine itself only dispatches: each request goes to the part whose job it is
// (bridge/README.md lists them), with a RequestContext naming the rank, its thread
// and that thread's clock; Progress() runs the commit loop over them.
#pragma once

#include "engine/collective_launch.h"
#include "engine/collective_value_store.h"
#include "engine/commit_policy.h"
#include "engine/communicator_registry.h"
#include "engine/communicator_setup.h"
#include "engine/fold_layout.h"
#include "engine/host_function_holds.h"
#include "engine/lanes.h"
#include "engine/nccl_settings.h"
#include "engine/p2p_value_store.h"
#include "engine/rank_state.h"
#include "engine/request_context.h"
#include "engine/simulation_error.h"
#include "engine/wait_answers.h"
#include "gpu_model/device_timeline.h"
#include "gpu_model/kernel_cost_table.h"
#include "host_time_profile.h"
#include "network_model.h"
#include "protocol/messages.h"
#include "scenario.h"
#include "trace_recorder.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace phantora
{

class SimulationEngine
{
public:
    /// \p trace, when given, receives every op and every blocking call as a span.
    /// \p fold, when it folds, names the absent ranks (engine/fold_layout.h): they never
    /// connect, and the live rank standing for each answers for it.
    SimulationEngine(const Scenario& scenario, int worldSize, TraceRecorder* trace = nullptr,
                     SyncMode mode = SyncMode::Optimistic,
                     std::optional<FoldLayout> fold = std::nullopt);
    SimulationEngine(const SimulationEngine&) = delete;
    SimulationEngine& operator=(const SimulationEngine&) = delete;

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
    bool Optimistic() const { return m_commit.Optimistic(); }
    /// Every collective ending up to here is final and known to the timelines.
    int64_t CommittedNs() const { return m_commit.CommittedNs(); }
    const std::vector<RankState>& Ranks() const { return m_lanes.Ranks(); }
    const DeviceTimeline& Timeline(int rank) const
    {
        return m_timelines.at(static_cast<std::size_t>(rank));
    }
    const KernelCostTable& Kernels() const { return m_kernels; }
    /// The simulated program's name (profile::ProgramName): its own measurements are
    /// preferred where the profile holds several programs' (KernelCostTable::PreferProgram).
    void PreferProfileProgram(std::string program) { m_kernels.PreferProgram(std::move(program)); }
    const NetworkModel& Network() const { return m_network; }
    /// The recorded host time and local CPU scale every rank is told at its hello.
    void SetHostTime(HostTimeProfile hostTime) { m_hostTime = std::move(hostTime); }
    /// For a bridge that serves ranks (it was not given the command): the first hello sets
    /// the host time to \p prepare's for the command it names (wire::Hello::command; empty
    /// from a rank phantora-rank did not start), before any rank is welcomed.
    void PrepareHostTimeAtFirstHello(
        std::function<HostTimeProfile(const std::vector<std::string>& command)> prepare)
    {
        m_prepareHostTime = std::move(prepare);
    }
    const HostTimeProfile& HostTime() const { return m_hostTime; }
    int WorldSize() const { return m_lanes.WorldSize(); }
    const FoldLayout& Fold() const { return m_fold; }
    /// Where simulated time stands and what holds it back: the commit bounds, the
    /// network's next completion and every thread's state (for a run that seems stalled).
    std::string StateReport() const;

private:
    void OnHello(const RequestContext& ctx, const wire::Hello& m);
    /// A slice of the host-time or read-back table the rank's Welcome announced.
    void OnTableChunk(const RequestContext& ctx, const wire::TableChunk& m);
    void OnMemcpy(const RequestContext& ctx, const wire::Memcpy& m);
    void OnCollective(const RequestContext& ctx, const wire::NcclCollective& m);
    void OnP2P(const RequestContext& ctx, const wire::NcclP2P& m);
    /// Host functions on streams: the stream holds until the rank ran it.
    void OnHostFunction(const RequestContext& ctx, const wire::HostFunction& m);
    /// Throws SimulationError when ranks wait for something that cannot come.
    void CheckDeadlock() const;
    DeviceTimeline& TimelineOf(int rank) { return m_timelines[static_cast<std::size_t>(rank)]; }

    // Declared in construction order: each part is given the ones above it.
    const Scenario& m_scenario;
    TraceRecorder* m_trace;
    FoldLayout m_fold;
    HostTimeProfile m_hostTime;
    std::function<HostTimeProfile(const std::vector<std::string>&)> m_prepareHostTime;
    NetworkModel m_network;
    KernelCostTable m_kernels;
    Lanes m_lanes;
    std::vector<DeviceTimeline> m_timelines;
    CommunicatorRegistry m_comms;
    NcclSettings m_nccl;
    CommunicatorSetup m_setup;
    CollectiveLaunch m_launch;
    CollectiveValueStore m_values;
    P2PValueStore m_p2pValues;
    HostFunctionHolds m_holds;
    CommitPolicy m_commit;
    WaitAnswers m_waits;
    bool m_moreToDo{false};
};

} // namespace phantora
