#include "engine/simulation_engine.h"

#include "engine/copies.h"
#include "engine/deadlock_report.h"
#include "device_welcome.h"
#include "gpu_model/profile/program_name.h"
#include "nccl/collective_kind.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <sstream>
#include <utility>

namespace phantora
{

namespace
{

template <class... F> struct Overloaded : F...
{
    using F::operator()...;
};
template <class... F> Overloaded(F...) -> Overloaded<F...>;

int CheckedWorldSize(int worldSize)
{
    if (worldSize <= 0)
    {
        throw SimulationError("the simulation needs at least one rank");
    }
    return worldSize;
}

/// A launch's CTA count; library ops (GEMMs, cuDNN graphs) come without a grid and are
/// taken to fill the GPU, as their large instances do.  cuBLAS's GEMMs on Hopper and later
/// are persistent kernels (one CTA per SM: sm_sharing.h).
uint64_t Ctas(const wire::KernelLaunch& m, const GpuSpec& gpu)
{
    const uint64_t ctas = uint64_t{m.grid[0]} * std::max(m.grid[1], 1U) * std::max(m.grid[2], 1U);
    if (ctas != 0)
    {
        return ctas;
    }
    return gpu.ccMajor >= 9 && m.name.rfind("cublas", 0) == 0 ? SmSharing::kPersistent
                                                              : SmSharing::kFillsGpu;
}

/// Whether a kernel keeps the GPU's memory busy rather than its SMs (hbm_share.h): the
/// framework's own kernels (elementwise, normalisation, reduction, copy and optimizer
/// kernels) are; GEMMs and fused attention are not, whether they come from a library
/// without a grid or as kernels of their own (CUTLASS, FlashAttention, Triton templates).
bool MemoryBound(uint64_t ctas, const std::string& name)
{
    if (ctas == SmSharing::kPersistent || ctas == SmSharing::kFillsGpu)
    {
        return false;
    }
    std::string lower(name.size(), ' ');
    std::transform(name.begin(), name.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* computeBound :
         {"gemm", "xmma", "cutlass", "wgmma", "flash", "fmha", "sdpa", "attention", "triton_tem"})
    {
        if (lower.find(computeBound) != std::string::npos)
        {
            return false;
        }
    }
    return true;
}

} // namespace

SimulationEngine::SimulationEngine(const Scenario& scenario, int worldSize, TraceRecorder* trace,
                                   SyncMode mode, std::optional<FoldLayout> fold)
    : m_scenario(scenario), m_trace(trace), m_fold(fold ? *fold : FoldLayout(worldSize)),
      m_network(scenario), m_kernels(scenario.gpu, scenario.kernels, scenario.file),
      m_lanes(CheckedWorldSize(worldSize), trace),
      m_timelines(
          static_cast<std::size_t>(worldSize),
          DeviceTimeline(scenario.gpu.launchLatencyNs,
                         scenario.gpu.commInterference ? scenario.gpu.smCount : 0,
                         StreamGap{scenario.gpu.streamGapNs, scenario.gpu.streamGapBesideBlockedNs,
                                   scenario.gpu.graphNodeGapNs})),
      m_comms(m_fold), m_nccl(scenario.nccl), m_setup(m_comms, m_nccl, m_lanes),
      m_launch(scenario, m_network, m_timelines, m_nccl, m_fold),
      m_holds([this](int rank, uint64_t ticket, int64_t endNs)
              { TimelineOf(rank).CompleteCollective(ticket, endNs); }),
      m_commit(m_lanes.Ranks(), m_comms, m_launch, m_network, scenario.gpu.launchLatencyNs, mode,
               trace),
      m_waits(m_lanes, m_timelines, m_commit, m_comms, m_launch, m_values, m_p2pValues)
{
    if (static_cast<uint32_t>(worldSize) > m_network.GpuCount())
    {
        throw SimulationError(fmt::format("{} ranks but the scenario {} has only {} GPUs",
                                          worldSize, scenario.file.string(), m_network.GpuCount()));
    }
    if (m_fold.WorldSize() != worldSize)
    {
        throw SimulationError(
            fmt::format("a fold of {} for a world of {} ranks", m_fold.Describe(), worldSize));
    }
    for (int rank = 0; rank < worldSize; ++rank)
    {
        if (!m_fold.IsLive(rank))
        {
            m_lanes.Rank(rank).phase = RankPhase::Folded;
        }
    }
    if (m_trace)
    {
        for (int rank = 0; rank < worldSize; ++rank)
        {
            TimelineOf(rank).SetObserver(
                [this, rank](uint64_t stream, const std::string& label, int64_t start, int64_t end)
                { m_trace->Span(rank, fmt::format("stream {:#x}", stream), label, start, end); });
        }
    }
}

void SimulationEngine::Handle(int rank, const wire::RequestEnvelope& req,
                              std::vector<OutgoingReply>& out)
{
    RankState& r = m_lanes.Rank(rank);
    if (r.phase == RankPhase::Folded)
    {
        throw SimulationError(fmt::format(
            "a process connected as rank {}, which is folded into rank {} ({}): only live "
            "ranks run",
            rank, m_fold.Representative(rank), m_fold.Describe()));
    }
    const RequestContext ctx = m_lanes.Enter(rank, req, m_commit.CommittedNs(), out);
    r.lastCall = wire::RequestName(req.body);
    DeviceTimeline& tl = TimelineOf(rank);
    std::visit(
        Overloaded{
            [&](const wire::Hello& m) { OnHello(ctx, m); },
            [&](const wire::KernelLaunch& m)
            {
                r.lastCall = "kernel " + m.name;
                ++r.kernels;
                const uint64_t ctas = Ctas(m, m_scenario.gpu);
                const profile::OpKey key =
                    profile::KeyForLaunch(m.name, m.grid, m.block, m.sharedMem);
                tl.EnqueueTimed(m.stream, ctx.nowNs, m_kernels.Kernel(key, m.args, m.work).ns, 0,
                                m.name, ctas, MemoryBound(ctas, m.name), ctx.graphNode);
                r.graphNodes += ctx.graphNode ? 1 : 0;
            },
            [&](const wire::Memcpy& m) { OnMemcpy(ctx, m); },
            [&](const wire::Synchronize& m)
            {
                PendingWait w;
                w.kind = m.wholeDevice ? PendingWait::Kind::Device : PendingWait::Kind::Stream;
                w.stream = m.stream;
                w.call = m.wholeDevice ? "cudaDeviceSynchronize"
                                       : fmt::format("cudaStreamSynchronize(stream {})", m.stream);
                m_lanes.Block(ctx, std::move(w));
            },
            [&](const wire::NcclCommInit& m) { m_setup.OnCommInit(ctx, m); },
            [&](const wire::NcclCollective& m) { OnCollective(ctx, m); },
            [&](const wire::NcclCommDestroy&) {},
            [&](const wire::NcclCommSplit& m) { m_setup.OnCommSplit(ctx, m); },
            [&](const wire::EventRecord& m) { tl.EnqueueRecord(m.stream, ctx.nowNs, m.record); },
            [&](const wire::StreamWaitEvent& m) { tl.EnqueueWait(m.stream, m.record, ctx.nowNs); },
            [&](const wire::EventWait& m)
            {
                PendingWait w;
                w.kind = m.query ? PendingWait::Kind::EventQuery : PendingWait::Kind::EventSync;
                w.record = m.record;
                w.call = m.query ? "cudaEventQuery" : "cudaEventSynchronize";
                m_lanes.Block(ctx, std::move(w));
            },
            [&](const wire::EventElapsed& m)
            {
                PendingWait w;
                w.kind = PendingWait::Kind::EventElapsed;
                w.record = m.start;
                w.endRecord = m.end;
                w.call = "cudaEventElapsedTime";
                m_lanes.Block(ctx, std::move(w));
            },
            [&](const wire::NcclP2P& m) { OnP2P(ctx, m); },
            [&](const wire::TableChunk& m) { OnTableChunk(ctx, m); },
            [&](const wire::HostEvent& m) { m_lanes.OnHostEvent(ctx, m, m_commit.CommittedNs()); },
            [&](const wire::HostFunction& m) { OnHostFunction(ctx, m); },
            [&](const wire::HostFunctionDone& m) { m_holds.Done(rank, m.id, ctx.nowNs); },
            [&](const wire::CollectiveValues& m)
            {
                PendingWait w;
                w.kind = PendingWait::Kind::CollectiveValues;
                w.comm = m.comm;
                w.sequence = m.sequence;
                w.call = fmt::format("reading the result of collective {} on communicator {:#x}",
                                     m.sequence, m.comm);
                m_lanes.Block(ctx, std::move(w));
            },
            [&](const wire::P2PValues& m)
            {
                PendingWait w;
                w.kind = PendingWait::Kind::P2PValues;
                w.comm = m.comm;
                w.peer = m.peer;
                w.sequence = m.sequence;
                w.call = fmt::format("reading receive {} from rank {} on communicator {:#x}",
                                     m.sequence, m.peer, m.comm);
                m_lanes.Block(ctx, std::move(w));
            },
            // phantora-rank's heartbeat: BridgeServer answers it and never hands it here.
            [&](const wire::Watch&) {},
            [&](const wire::Goodbye& m)
            {
                r.peakDeviceBytes = m.peakDeviceBytes;
                r.hostTimeNs = m.hostTime.ns;
                r.hostTimeGaps = m.hostTime.gaps;
                r.readbacksServed = m.hostTime.readbacksServed;
                r.readbacksZeros = m.hostTime.readbacksZeros;
                r.saidGoodbye = true;
                // The goodbye can arrive after the process was reaped.
                if (r.phase != RankPhase::Exited)
                {
                    r.phase = RankPhase::Finished;
                }
            },
        },
        req.body);
    if (r.phase == RankPhase::NotConnected)
    {
        r.phase = RankPhase::Running;
    }
}

void SimulationEngine::OnHello(const RequestContext& ctx, const wire::Hello& m)
{
    RankState& r = m_lanes.Rank(ctx.rank);
    r.pid = m.pid;
    r.phase = RankPhase::Running;
    if (m_prepareHostTime)
    {
        std::vector<std::string> command;
        std::istringstream words(m.command);
        for (std::string w; std::getline(words, w, '\n');)
        {
            command.push_back(w);
        }
        m_kernels.PreferProgram(profile::ProgramName(command));
        m_hostTime = std::exchange(m_prepareHostTime, nullptr)(command);
    }
    if (m.hardwareQueues == 1)
    {
        TimelineOf(ctx.rank).UseOneHardwareQueue();
    }
    wire::Welcome w = DeviceWelcome(m_scenario);
    w.localDevice = ctx.rank % w.deviceCount;
    w.cpuTimeScale = m_scenario.cpu.timeScale;
    w.callOverheadNs = m_scenario.cpu.callOverheadNs;
    w.queryOverheadNs = m_scenario.cpu.queryOverheadNs;
    w.localCpuScale = m_hostTime.localScale;
    if (ctx.lane == 0)
    {
        // The rank's first thread loads the table; its other threads' hellos need no copy.
        w.hostTimeTableBytes = m_hostTime.table.size();
        w.readbackTableBytes = m_hostTime.readbacks.size();
    }
    ctx.out.push_back({ctx.rank, {ctx.seq, w}, ctx.lane});
}

void SimulationEngine::OnTableChunk(const RequestContext& ctx, const wire::TableChunk& m)
{
    const std::string& table =
        m.table == wire::HostTable::HostTime ? m_hostTime.table : m_hostTime.readbacks;
    if (m.offset > table.size())
    {
        throw SimulationError(fmt::format("rank {} asked for the host-time tables' bytes from {} "
                                          "on, past their end ({} bytes)",
                                          ctx.rank, m.offset, table.size()));
    }
    wire::TableData data;
    data.bytes = table.substr(m.offset, wire::kMaxTableChunkBytes);
    ctx.out.push_back({ctx.rank, {ctx.seq, std::move(data)}, ctx.lane});
}

void SimulationEngine::OnMemcpy(const RequestContext& ctx, const wire::Memcpy& m)
{
    RankState& r = m_lanes.Rank(ctx.rank);
    ++r.copies;
    const int64_t modelNs = CopyDurationNs(m_scenario.gpu, m.kind, m.bytes);
    const int64_t ns = m_kernels.Copy(CopyKey(m.kind, m.bytes), modelNs, m.pinnedHost).ns;
    TimelineOf(ctx.rank).EnqueueTimed(m.stream, ctx.nowNs, ns, 0, CopyLabel(m.kind, m.bytes), 0,
                                      false, ctx.graphNode);
    r.graphNodes += ctx.graphNode ? 1 : 0;
    if (m.blocking)
    {
        // cudaMemcpy: on the legacy default stream (ordered after the blocking
        // streams' work by the timeline), and it returns when the copy is done.
        PendingWait w;
        w.kind = PendingWait::Kind::Stream;
        w.stream = m.stream;
        w.call = fmt::format("cudaMemcpy({} bytes)", m.bytes);
        m_lanes.Block(ctx, std::move(w));
    }
}

void SimulationEngine::OnCollective(const RequestContext& ctx, const wire::NcclCollective& m)
{
    RankState& r = m_lanes.Rank(ctx.rank);
    ++r.collectives;
    r.graphNodes += ctx.graphNode ? 1 : 0;
    r.lastCall = fmt::format("{} of {} bytes", CollectiveName(m.op), m.bytes);
    const Communicator& comm = m_comms.Get(m.comm);
    CollectiveTally& tally = r.tally[{CollectiveName(m.op), comm.ranks}];
    ++tally.count;
    tally.bytes += m.bytes;
    const int member = m_comms.MemberIndex(comm, ctx.rank);
    const uint64_t sequence = m_launch.NumberCollective(m.comm, ctx.rank);
    if (m.hasValues)
    {
        m_values.Offer(m.comm, sequence, comm.ranks.size(), member, m);
        // An absent replica would have sent the same bytes: it runs the same code on the
        // same values (docs/folding.md).
        for (int absent : m_launch.AbsentMembersOf(comm, ctx.rank))
        {
            m_values.Offer(m.comm, sequence, comm.ranks.size(), absent, m, false);
        }
    }
    m_launch.EnqueueCollective(ctx, comm, member, sequence, m, r.collectives);
}

void SimulationEngine::OnP2P(const RequestContext& ctx, const wire::NcclP2P& m)
{
    RankState& r = m_lanes.Rank(ctx.rank);
    ++r.collectives;
    r.graphNodes += ctx.graphNode ? 1 : 0;
    const Communicator& comm = m_comms.Get(m.comm);
    for (const wire::P2POp& op : m.ops)
    {
        CollectiveTally& tally = r.tally[{op.send ? "send" : "recv", comm.ranks}];
        ++tally.count;
        tally.bytes += op.bytes;
    }
    const int member = m_comms.MemberIndex(comm, ctx.rank);
    for (const wire::P2POp& op : m.ops)
    {
        if (op.peer >= 0 && static_cast<std::size_t>(op.peer) < comm.ranks.size() &&
            !m_fold.IsLive(comm.ranks[static_cast<std::size_t>(op.peer)]))
        {
            // A send to another replica carries data that differs by replica (a pipeline
            // stage of one replica feeding another's does not exist in DP layouts).
            throw SimulationError(fmt::format(
                "cannot fold: rank {} {} rank {}, which is absent ({}); only collectives may "
                "span the folded dimension",
                ctx.rank, op.send ? "sends to" : "receives from",
                comm.ranks[static_cast<std::size_t>(op.peer)], m_fold.Describe()));
        }
    }
    CollectiveLaunch::P2PBatch batch = m_launch.NumberP2P(comm, member, m.ops);
    for (std::size_t i = 0; i < m.ops.size(); ++i)
    {
        if (m.ops[i].send && m.ops[i].hasValues)
        {
            m_p2pValues.Offer(m.comm, member, m.ops[i].peer, batch.ops[i].sequence,
                              m.ops[i].values);
        }
    }
    r.lastCall = fmt::format("send/recv ({} ops, {} bytes)", m.ops.size(), batch.bytes);
    m_launch.EnqueueP2P(ctx, comm, member, m.stream, std::move(batch));
}

void SimulationEngine::OnHostFunction(const RequestContext& ctx, const wire::HostFunction& m)
{
    const uint64_t ticket = m_launch.NextTicket();
    m_holds.Hold(ctx.rank, m.id, ticket);
    // Held like a collective: ops behind it wait until the host function returned.
    TimelineOf(ctx.rank).EnqueueCollective(
        m.stream, ctx.nowNs, ticket,
        [this, rank = ctx.rank, id = m.id](int64_t readyNs) { m_holds.Ready(rank, id, readyNs); },
        "host function");
}

void SimulationEngine::Progress(std::vector<OutgoingReply>& out)
{
    m_moreToDo = false;
    for (;;)
    {
        const std::size_t answered = out.size();
        m_waits.AnswerAll(out, QueryRule::KnownOnly);
        if (m_commit.CommitOne())
        {
            continue;
        }
        if (out.size() > answered && m_commit.Optimistic() && m_network.CanAdvance())
        {
            // Released ranks first; the network runs ahead while they compute.
            m_moreToDo = true;
            return;
        }
        if (!m_network.Advance(m_commit.AdvanceLimit()))
        {
            // Last, once every other answer is given: queries nothing can complete by
            // their caller's clock any more.  Earlier, a rank about to be answered could
            // still have been about to start what completes them.
            const std::size_t before = out.size();
            m_waits.AnswerAll(out, QueryRule::SettleUnreachable);
            if (out.size() != before)
            {
                continue;
            }
            // Folded: a communicator its live members and their replicas make up is
            // complete once no other live rank can still join it.
            if (EveryRankWaits(m_lanes.Ranks()) && !m_network.Busy() && m_setup.ResolveFolded(out))
            {
                continue;
            }
            break;
        }
    }
    CheckDeadlock();
}

void SimulationEngine::RankExited(int rank)
{
    m_lanes.Rank(rank).phase = RankPhase::Exited;
}

bool SimulationEngine::AllDone() const
{
    const auto& ranks = m_lanes.Ranks();
    return std::all_of(ranks.begin(), ranks.end(),
                       [](const RankState& r)
                       { return r.phase == RankPhase::Exited || r.phase == RankPhase::Folded; });
}

std::string SimulationEngine::StateReport() const
{
    const NetworkModel::Completion* next = m_network.NextCompletion();
    std::string msg = fmt::format(
        "engine state: committed {} ns, horizon {} ns, send bound {} ns, network at {} ns, "
        "undecided from {} ns, next completion {}, collectives open: {}\n",
        m_commit.CommittedNs(), m_commit.Horizon(), m_commit.SendBound(), m_network.NowNs(),
        m_network.UndecidedFromNs(), next ? fmt::format("{} ns", next->endNs) : std::string("none"),
        m_launch.Incomplete().size());
    for (const auto& s : m_launch.Incomplete())
    {
        msg += "  " + s + "\n";
    }
    return msg + LaneStateReport(m_lanes.Ranks());
}

void SimulationEngine::CheckDeadlock() const
{
    if (!EveryRankWaits(m_lanes.Ranks()) || m_network.Busy())
    {
        return;
    }
    std::vector<std::string> open = m_launch.Incomplete();
    for (auto& s : m_comms.PendingInits())
    {
        open.push_back(std::move(s));
    }
    throw SimulationError(DeadlockReport(m_lanes.Ranks(), open), RunEnd::Deadlock);
}

} // namespace phantora
