// The simulated GPU of one rank: its streams as queues of operations.  An op
// starts at max(enqueue time + launch latency, the end of the stream's previous
// op + the stream gap, a caller-given earliest start); its end is start + duration,
// except for a collective, whose end only the network can tell.  Ops queued behind an
// unfinished collective wait, exactly as they would on the real stream.
// The stream gap is the GPU's own: a real stream idles 1-2 us between two kernels or
// copies even when the second is long queued, and longer while two or more of the GPU's
// other streams sit blocked on events, as FSDP2's all-gather, copy-in and reduce-scatter
// streams do (bench/accuracy/README.md, "The stream gap").
#pragma once

#include "hbm_share.h"
#include "interval_set.h"
#include "sm_sharing.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phantora
{

/// How long a stream idles after an op before the next one queued on it starts.
struct StreamGap
{
    int64_t ns{0};
    /// Added while at least kBlockedStreams of the GPU's other streams are blocked on an
    /// event (cudaStreamWaitEvent, or CUDA's legacy-stream ordering).
    int64_t besideBlockedNs{0};
    /// In place of \ref ns after a node of a replayed CUDA graph (GpuSpec::graphNodeGapNs).
    int64_t graphNodeNs{0};
    static constexpr int kBlockedStreams = 2;
};

class DeviceTimeline
{
public:
    /// Told the instant a collective's predecessors on its stream are done.
    using ReadyCallback = std::function<void(int64_t readyNs)>;

    /// Told of every op once its start and end are known (for traces).
    using OpObserver = std::function<void(uint64_t stream, const std::string& label,
                                          int64_t startNs, int64_t endNs)>;

    /// \p smCount > 0: kernels and collectives share that many SMs (sm_sharing.h).
    /// \p gap: how long a stream idles after each kernel, copy, memset or collective
    /// before the next one queued on it can start.
    explicit DeviceTimeline(int64_t launchLatencyNs, int32_t smCount = 0, StreamGap gap = {});
    void SetObserver(OpObserver observer) { m_observer = std::move(observer); }
    /// One hardware queue for all streams (CUDA_DEVICE_MAX_CONNECTIONS=1): work blocked on
    /// an event waits behind the running stream's and costs its gaps nothing.
    void UseOneHardwareQueue() { m_gap.besideBlockedNs = 0; }

    /// A kernel, copy or memset that takes \p durationNs alone.  \p ctas: the kernel's CTA
    /// count (SmSharing::kFillsGpu if unknown), which decides how collectives slow it; 0
    /// for work that does not run on the SMs (copy engines).  \p memoryBound: a kernel that
    /// keeps the GPU's memory busy from every SM, which slows collectives beside it
    /// (hbm_share.h).  \p graphNode: a node of a replayed CUDA graph, followed by the
    /// graph node gap instead of the stream gap.
    void EnqueueTimed(uint64_t stream, int64_t enqueueNs, int64_t durationNs,
                      int64_t notBeforeNs = 0, std::string label = {}, uint64_t ctas = 0,
                      bool memoryBound = false, bool graphNode = false);

    /// A collective identified by \p ticket; \p onReady fires (maybe at once) when it can
    /// start: when its stream reaches it and its \p channels CTAs find SMs.
    /// \p expectedNs (NCCL's tuning estimate) stands for its length until the network ends it.
    void EnqueueCollective(uint64_t stream, int64_t enqueueNs, uint64_t ticket,
                           ReadyCallback onReady, std::string label = {}, uint32_t channels = 0,
                           int64_t expectedNs = 0);

    /// The network finished collective \p ticket at \p endNs: ops queued behind it proceed.
    /// \p smsFreedNs (default: \p endNs): until when its CTAs count as holding their SMs
    /// for the kernels beside it (see CollectiveLaunch::InSituEnd for why it can be
    /// earlier).
    void CompleteCollective(uint64_t ticket, int64_t endNs, int64_t smsFreedNs = -1);

    /// The share of [fromNs, toNs) during which memory-bound work ran (hbm_share.h).
    double MemoryBoundShare(int64_t fromNs, int64_t toNs) const
    {
        return m_hbm.Share(fromNs, toNs);
    }

    /// cudaEventRecord: \p record completes when the stream's earlier work has.
    void EnqueueRecord(uint64_t stream, int64_t enqueueNs, uint64_t record);
    /// cudaStreamWaitEvent at \p enqueueNs: later ops on \p stream start after \p record
    /// completes.  A record this timeline has never seen counts as complete (CUDA: an
    /// event never recorded is complete).
    void EnqueueWait(uint64_t stream, uint64_t record, int64_t enqueueNs = 0);

    /// How many streams other than \p stream sat blocked on an event at \p atNs, as far
    /// as the ops queued so far tell.
    int BlockedStreamsBeside(uint64_t stream, int64_t atNs) const;
    /// When \p record completed, or nullopt while unknown.  Unknown records: 0.
    std::optional<int64_t> RecordTime(uint64_t record) const;

    /// End of the last op on \p stream, or nullopt while it waits for a collective.
    std::optional<int64_t> StreamTail(uint64_t stream) const;
    /// End of the last op on any stream, or nullopt while any stream waits.
    std::optional<int64_t> DeviceTail() const;

    uint64_t TimedOps() const { return m_timedOps; }
    uint64_t Collectives() const { return m_collectives; }
    int64_t BusyNs() const { return m_busyNs; }
    /// When kernels, copies or memsets ran (on any stream).
    const IntervalSet& ComputeSpans() const { return m_computeSpans; }
    /// When collectives ran (on any stream), from their start to their end.
    const IntervalSet& CollectiveSpans() const { return m_collectiveSpans; }
    /// Collectives' time summed over the ended ones: as the network ran them alone, and as
    /// they ran beside this GPU's memory-bound kernels (hbm_share.h).
    int64_t CollectiveNetworkNs() const { return m_collectiveNetworkNs; }
    int64_t CollectiveInSituNs() const { return m_collectiveInSituNs; }
    /// The extra stream gap charged while other streams sat blocked on events.
    int64_t BlockedGapNs() const { return m_blockedGapNs; }

private:
    struct PendingOp
    {
        enum class Kind
        {
            Timed,
            Collective,
            Record, ///< zero-length marker: its start is the record's time
            Wait,   ///< holds the stream until a record is known
        };
        Kind kind;
        int64_t enqueueNs;
        int64_t durationNs;
        int64_t notBeforeNs;
        uint64_t id; ///< collective ticket or record id
        ReadyCallback onReady;
        std::string label{};
        int64_t startNs{0};   ///< collectives: when they started
        uint64_t ctas{0};     ///< timed kernels: CTAs (0: not on the SMs)
        uint32_t channels{0}; ///< collectives: CTAs, one per channel
        int64_t expectedNs{0};
        bool memoryBound{false}; ///< timed ops: keeps the GPU's memory busy
        bool graphNode{false};   ///< timed ops: a node of a replayed CUDA graph
    };

    struct Stream
    {
        uint64_t id{0};
        int64_t tailNs{0};
        uint64_t legacySeen{0};  ///< blocking streams: legacy ops already waited for
        bool sinceLegacy{false}; ///< blocking streams: ops queued since the last legacy op
        /// When the stream's queued work is expected to end (NCCL's estimates standing in
        /// for collectives the network has not ended): where a queued collective's SMs
        /// are forecast to be taken.
        int64_t forecastNs{0};
        /// Front: a collective already started (waiting for its end), then ops behind it.
        std::deque<PendingOp> waiting;
        /// The stream's tail is the end of an op (plus the gap), not a wait's release.
        bool tailAfterOp{false};
        /// When it sat blocked on an event, the latest last ({from, to}; to = kOpen while
        /// the event is not placed yet); the oldest are forgotten past kKept.
        std::deque<std::pair<int64_t, int64_t>> blocked;
        /// Where its ops followed their predecessors back to back without the extra gap
        /// (the tail they started from), oldest first: a wait the host issues later on
        /// another stream may turn out to have blocked it then (ChargeBlockedGaps).
        std::deque<int64_t> uncharged;
    };
    static constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();
    static constexpr std::size_t kKept = 512;

    int64_t EarliestStart(const Stream& s, const PendingOp& op) const;
    /// EarliestStart of a kernel, copy, memset or collective: after the stream gap.
    int64_t OpStart(Stream& s, const PendingOp& op);
    /// Notes that \p s sits blocked from \p fromNs until \p toNs (kOpen: not known yet).
    void Block(Stream& s, int64_t fromNs, int64_t toNs);
    /// Charges the extra gap to the ops of streams other than \p blocked that started
    /// back to back in [fromNs, toNs) and now find enough streams blocked beside them;
    /// each such stream's later work moves back by what its ops were charged.
    void ChargeBlockedGaps(uint64_t blocked, int64_t fromNs, int64_t toNs);
    /// Runs the ops queued on \p s until the next collective (which it starts) or an
    /// unresolved wait.
    void Drain(Stream& s);
    /// Queues \p op with CUDA's legacy default-stream ordering: work on stream 0 waits
    /// for earlier work of every blocking stream, and blocking streams wait for earlier
    /// work on stream 0 (non-blocking streams do neither).
    void Push(uint64_t stream, PendingOp op);
    /// Queues \p op as it is, draining the stream if it was idle.
    void PushRaw(uint64_t stream, PendingOp op);
    /// Makes \p waiter start its next op only after everything queued on \p target so far.
    void Order(uint64_t target, uint64_t waiter, int64_t enqueueNs);

    int64_t m_launchLatencyNs;
    StreamGap m_gap;
    SmSharing m_sms;
    std::map<uint64_t, Stream> m_streams;
    std::map<uint64_t, uint64_t> m_ticketStream;          ///< running collectives -> their stream
    std::map<uint64_t, std::optional<int64_t>> m_records; ///< record -> time, once enqueued
    std::map<uint64_t, std::vector<uint64_t>> m_waiters;  ///< record -> streams blocked on it
    uint64_t m_timedOps{0};
    int64_t m_blockedGapNs{0};
    uint64_t m_collectives{0};
    int64_t m_busyNs{0};
    IntervalSet m_computeSpans;
    IntervalSet m_collectiveSpans;
    HbmShare m_hbm;
    int64_t m_collectiveNetworkNs{0};
    int64_t m_collectiveInSituNs{0};
    OpObserver m_observer;
    uint64_t m_legacyOps{0};    ///< ops queued on the legacy stream so far
    uint64_t m_nextImplicit{0}; ///< records the timeline adds itself, for legacy ordering
};

} // namespace phantora
