// The bridge's handle on the ns-3 simulation of the cluster network.  It runs
// ahead of the ranks (optimistically) and takes back what it simulated when a
// collective turns up that starts in its past:
//
// - every collective is logged with its start instant and an order key, and the
//   collectives starting at one instant are applied together, in key order, after
//   every network event of that instant: the simulated result depends on the set of
//   collectives only, never on the order in which the bridge learnt of them;
// - whenever the network is idle it records a checkpoint (the instant, the transport's
//   flow numbering and how many collectives it had applied), which is all the state
//   an idle network has;
// - a collective starting before what the network already simulated restores the
//   latest checkpoint before it: ns-3 cannot run backwards, so the simulator is
//   destroyed and the topology and transport rebuilt with their clock offset to the
//   checkpoint, and every logged collective applied since is replayed with the new one.
//
// Completions are kept until the engine takes them; a taken completion is final (the
// engine only takes one once no rank can still send anything earlier), and a replay
// that reproduced it differently would be a bug, so that is checked.
#pragma once

#include "flow_recording_transport.h"
#include "nccl/plan.h"
#include "ns3/cluster-topology.h"
#include "ns3/phantora-transport.h"
#include "ns3/ptr.h"
#include "scenario.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace phantora
{

class NetworkModel
{
public:
    static constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
    /// Told a collective's end once it is final (from TakeCompletion).
    using DoneFn = std::function<void(int64_t endNs)>;

    /// Orders collectives that start at the same instant: any key that does not depend
    /// on the order in which ranks' messages arrived (the engine uses the lowest member
    /// rank and that rank's collective count).
    using OrderKey = std::pair<int64_t, uint64_t>;

    /// One GPU pair's share of a collective, in absolute simulated ns.
    struct FlowSpan
    {
        uint32_t srcGpu;
        uint32_t dstGpu;
        int64_t startNs;
        int64_t endNs;
        uint64_t bytes;
        uint32_t transfers;
    };

    struct Completion
    {
        uint64_t id{0};
        std::string label;
        int64_t startNs{0};
        int64_t endNs{0}; ///< the last rank's end of the last call
        /// [call][plan rank]: when each rank ended its part (NcclPlanExecutor::RankEnds).
        std::vector<std::vector<int64_t>> rankEndNs;
        std::vector<FlowSpan> flows;
    };
    /// Told the whole completion, each rank's end included, once it is final.
    using CompletionFn = std::function<void(const Completion&)>;

    struct Counters
    {
        uint64_t checkpoints{0};          ///< idle instants recorded as restore points
        uint64_t pastEvents{0};           ///< collectives that arrived in the network's past
        uint64_t restores{0};             ///< times the network was rebuilt at a checkpoint
        uint64_t replayedCollectives{0};  ///< collectives simulated again after a restore
        uint64_t discardedCompletions{0}; ///< speculative completions a restore took back
    };

    /// Sets ns-3's time resolution to picoseconds: call before any other ns-3 use.
    explicit NetworkModel(const Scenario& scenario);
    ~NetworkModel();
    NetworkModel(const NetworkModel&) = delete;
    NetworkModel& operator=(const NetworkModel&) = delete;

    /// Runs \p plan among \p gpus from \p startNs; \p onDone hears of its end once
    /// taken.  A start in the network's past makes it restore a checkpoint; \p startNs
    /// must not precede a completion already taken.  \p label names it in traces.
    void StartCollective(int64_t startNs, nccl::Plan plan, std::vector<uint32_t> gpus,
                         DoneFn onDone, OrderKey order = {}, std::string label = {});
    /// As above; \p onDone is given each rank's end (Completion::rankEndNs).
    void StartCollective(int64_t startNs, nccl::Plan plan, std::vector<uint32_t> gpus,
                         CompletionFn onDone, OrderKey order = {}, std::string label = {});

    /// Simulates forward: events up to \p limitNs included, collectives starting before
    /// it.  Returns right after a collective completes (true), or false when nothing is
    /// left to do below the limit.
    bool Advance(int64_t limitNs);

    /// The earliest untaken completion, once no completion still unknown can end at or
    /// before it; nullptr otherwise.
    const Completion* NextCompletion() const;
    /// Takes NextCompletion(): from now on it is final.  Calls its DoneFn, which may
    /// start further collectives.
    Completion TakeCompletion();

    /// For a network driven on its own, with nobody to wait for: runs up to \p horizonNs
    /// and takes every completion decided by then.  True when it took one.
    bool RunUntil(int64_t horizonNs);

    /// No completion that is not taken yet can end before this instant (ns).
    int64_t UndecidedFromNs() const;

    /// Collectives pending, in flight, or completed and not taken.
    bool Busy() const;
    /// Whether Advance(kForever) would have anything to do.
    bool CanAdvance() const { return m_inFlight > 0 || !m_pending.empty(); }
    int64_t NowNs() const;
    uint32_t GpuCount() const;
    const char* TransportName() const { return m_transportName; }
    const Counters& Stats() const { return m_counters; }

private:
    struct Logged
    {
        OrderKey order;
        int64_t startPs{0};
        nccl::Plan plan;
        std::vector<uint32_t> gpus;
        std::optional<uint64_t> applied; ///< its number among applied collectives
        bool done{false};
        int64_t doneEndNs{0};
        std::optional<int64_t> takenEndNs; ///< the final end, once taken
        CompletionFn onDone;
        std::string label;
        ns3::Ptr<FlowRecordingTransport> recorder;
    };

    struct Checkpoint
    {
        int64_t ps;
        uint64_t flows;      ///< the transport's flow numbering
        uint64_t applied;    ///< collectives applied before it
        int64_t lastBatchPs; ///< instant of the last start batch before it
    };

    using DoneKey = std::tuple<int64_t, OrderKey, uint64_t>;    ///< (end ns, order, id)
    using PendingKey = std::tuple<int64_t, OrderKey, uint64_t>; ///< (start ps, order, id)

    void Build();
    int64_t NowPs() const;
    /// Runs every event of the present instant, with the ones they schedule for it.
    void DrainInstant();
    void ApplyBatch(int64_t atPs);
    void Launch(uint64_t id, Logged& c);
    void Finished(uint64_t id, const std::vector<std::vector<int64_t>>& rankEndNs);
    void MaybeCheckpoint();
    /// Rebuilds the network at the latest checkpoint a collective starting at \p startPs
    /// can be inserted after, and queues everything applied since for replay.
    void Restore(int64_t startPs);
    /// Forgets checkpoints and log entries no collective starting at \p fromPs or later needs.
    void Prune(int64_t fromPs);
    /// The earliest instant (ps) at which a collective not completed yet may complete.
    int64_t UnknownFromPs() const;

    const Scenario& m_scenario;
    ns3::Ptr<ns3::ClusterTopology> m_topology;
    ns3::Ptr<ns3::PhantoraTransport> m_transport;
    const char* m_transportName{"packet"};
    int64_t m_basePs{0}; ///< absolute instant of ns-3's time zero (the restored checkpoint)
    uint64_t m_inFlight{0};
    bool m_completed{false};
    int64_t m_drainedPs{-1};   ///< the instant whose events were all run, if it is the present
    int64_t m_lastBatchPs{-1}; ///< instant of the last start batch applied
    uint64_t m_applied{0};
    std::map<uint64_t, Logged> m_log;
    std::set<PendingKey> m_pending;
    std::map<DoneKey, Completion> m_done;
    std::vector<Checkpoint> m_checkpoints;
    Counters m_counters;
    uint64_t m_nextId{1};
};

} // namespace phantora
