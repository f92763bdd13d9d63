#include "simulation_engine.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace phantora
{

namespace
{

template <class... F> struct Overloaded : F...
{
    using F::operator()...;
};
template <class... F> Overloaded(F...) -> Overloaded<F...>;

std::string CopyLabel(wire::CopyKind kind, uint64_t bytes)
{
    static constexpr const char* kNames[] = {"memcpy HtoH", "memcpy HtoD", "memcpy DtoH",
                                             "memcpy DtoD", "memset"};
    return fmt::format("{} {} B", kNames[static_cast<int>(kind)], bytes);
}

} // namespace

SimulationEngine::SimulationEngine(const Scenario& scenario, int worldSize, TraceRecorder* trace)
    : m_scenario(scenario), m_network(scenario), m_kernels(scenario),
      m_ranks(static_cast<std::size_t>(worldSize)),
      m_matcher([this](const MatchedCollective& c) { StartMatched(c); }), m_trace(trace)
{
    if (worldSize <= 0)
    {
        throw SimulationError("the simulation needs at least one rank");
    }
    if (static_cast<uint32_t>(worldSize) > m_network.GpuCount())
    {
        throw SimulationError(fmt::format("{} ranks but the scenario {} has only {} GPUs",
                                          worldSize, scenario.file.string(), m_network.GpuCount()));
    }
    m_timelines.assign(static_cast<std::size_t>(worldSize),
                       DeviceTimeline(scenario.gpu.launchLatencyNs));
    if (m_trace)
    {
        for (int rank = 0; rank < worldSize; ++rank)
        {
            m_timelines[static_cast<std::size_t>(rank)].SetObserver(
                [this, rank](uint64_t stream, const std::string& label, int64_t start, int64_t end)
                { m_trace->Span(rank, fmt::format("stream {:#x}", stream), label, start, end); });
        }
    }
}

RankState& SimulationEngine::Rank(int rank)
{
    if (rank < 0 || rank >= WorldSize())
    {
        throw SimulationError(fmt::format("rank {} is outside the world of {}", rank, WorldSize()));
    }
    return m_ranks[static_cast<std::size_t>(rank)];
}

int64_t SimulationEngine::CopyDurationNs(wire::CopyKind kind, uint64_t bytes) const
{
    const double bits = static_cast<double>(bytes) * 8.0;
    switch (kind)
    {
    case wire::CopyKind::HostToHost:
        return 0;
    case wire::CopyKind::HostToDevice:
    case wire::CopyKind::DeviceToHost:
        return std::llround(bits / m_scenario.gpu.pcieBitsPerSecond * 1e9);
    case wire::CopyKind::DeviceToDevice:
        // read and write both cross the HBM
        return std::llround(2.0 * bits / m_scenario.gpu.hbmBitsPerSecond * 1e9);
    case wire::CopyKind::Memset:
        return std::llround(bits / m_scenario.gpu.hbmBitsPerSecond * 1e9);
    }
    return 0;
}

void SimulationEngine::Handle(int rank, const wire::RequestEnvelope& req,
                              std::vector<OutgoingReply>& out)
{
    RankState& r = Rank(rank);
    if (r.phase == RankPhase::Waiting)
    {
        throw SimulationError(fmt::format(
            "rank {} sent {} while blocked in {}: one thread per rank may call CUDA at a time",
            rank, wire::RequestName(req.body), r.lastCall));
    }
    r.clockNs = std::max(r.clockNs, req.clockNs);
    r.lastCall = wire::RequestName(req.body);
    DeviceTimeline& tl = m_timelines[static_cast<std::size_t>(rank)];
    std::visit(
        Overloaded{
            [&](const wire::Hello& m) { OnHello(rank, req, m, out); },
            [&](const wire::KernelLaunch& m)
            {
                r.lastCall = "kernel " + m.name;
                ++r.kernels;
                tl.EnqueueTimed(m.stream, r.clockNs, m_kernels.Kernel(m).ns, 0, m.name);
            },
            [&](const wire::Memcpy& m) { OnMemcpy(rank, req, m); },
            [&](const wire::Synchronize& m)
            {
                PendingWait w;
                w.kind = m.wholeDevice ? PendingWait::Kind::Device : PendingWait::Kind::Stream;
                w.seq = req.seq;
                w.stream = m.stream;
                w.callNs = r.clockNs;
                w.call = m.wholeDevice ? "cudaDeviceSynchronize"
                                       : fmt::format("cudaStreamSynchronize(stream {})", m.stream);
                Block(rank, std::move(w));
            },
            [&](const wire::NcclCommInit& m) { OnCommInit(rank, req, m, out); },
            [&](const wire::NcclCollective& m) { OnCollective(rank, req, m); },
            [&](const wire::NcclCommDestroy&) {},
            [&](const wire::NcclCommSplit& m) { OnCommSplit(rank, req, m, out); },
            [&](const wire::EventRecord& m) { tl.EnqueueRecord(m.stream, r.clockNs, m.record); },
            [&](const wire::StreamWaitEvent& m) { tl.EnqueueWait(m.stream, m.record); },
            [&](const wire::EventWait& m)
            {
                PendingWait w;
                w.kind = m.query ? PendingWait::Kind::EventQuery : PendingWait::Kind::EventSync;
                w.seq = req.seq;
                w.record = m.record;
                w.callNs = r.clockNs;
                w.call = m.query ? "cudaEventQuery" : "cudaEventSynchronize";
                Block(rank, std::move(w));
            },
            [&](const wire::EventElapsed& m)
            {
                PendingWait w;
                w.kind = PendingWait::Kind::EventElapsed;
                w.seq = req.seq;
                w.record = m.start;
                w.endRecord = m.end;
                w.callNs = r.clockNs;
                w.call = "cudaEventElapsedTime";
                Block(rank, std::move(w));
            },
            [&](const wire::Goodbye& m)
            {
                r.peakDeviceBytes = m.peakDeviceBytes;
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

void SimulationEngine::OnHello(int rank, const wire::RequestEnvelope& req, const wire::Hello& m,
                               std::vector<OutgoingReply>& out)
{
    RankState& r = Rank(rank);
    r.pid = m.pid;
    r.phase = RankPhase::Running;
    const auto& gpu = m_scenario.gpu;
    wire::Welcome w;
    w.gpuName = "NVIDIA " + gpu.model;
    w.gpuMemoryBytes = gpu.memoryBytes;
    w.deviceCount = static_cast<int32_t>(m_scenario.topology.gpusPerNode);
    w.localDevice = rank % w.deviceCount;
    w.smCount = gpu.smCount;
    w.ccMajor = gpu.ccMajor;
    w.ccMinor = gpu.ccMinor;
    w.cpuTimeScale = m_scenario.cpu.timeScale;
    w.callOverheadNs = m_scenario.cpu.callOverheadNs;
    out.push_back({rank, {req.seq, w}});
}

void SimulationEngine::OnMemcpy(int rank, const wire::RequestEnvelope& req, const wire::Memcpy& m)
{
    RankState& r = Rank(rank);
    ++r.copies;
    m_timelines[static_cast<std::size_t>(rank)].EnqueueTimed(
        m.stream, r.clockNs, m_kernels.Copy(m.kind, m.bytes, CopyDurationNs(m.kind, m.bytes)).ns, 0,
        CopyLabel(m.kind, m.bytes));
    if (m.blocking)
    {
        // cudaMemcpy: on the legacy default stream (ordered after the blocking
        // streams' work by the timeline), and it returns when the copy is done.
        PendingWait w;
        w.kind = PendingWait::Kind::Stream;
        w.seq = req.seq;
        w.stream = m.stream;
        w.callNs = r.clockNs;
        w.call = fmt::format("cudaMemcpy({} bytes)", m.bytes);
        Block(rank, std::move(w));
    }
}

void SimulationEngine::OnCommInit(int rank, const wire::RequestEnvelope& req,
                                  const wire::NcclCommInit& m, std::vector<OutgoingReply>& out)
{
    PendingWait w;
    w.kind = PendingWait::Kind::CommInit;
    w.seq = req.seq;
    w.callNs = Rank(rank).clockNs;
    w.call = fmt::format("ncclCommInitRank(nranks {}, rank {})", m.nranks, m.rank);
    Block(rank, std::move(w));
    auto joined = m_comms.Join(m.id, m.nranks, m.rank, rank);
    if (!joined)
    {
        return;
    }
    std::vector<std::pair<int, const Communicator*>> members;
    for (int member : joined->waitingRanks)
    {
        members.emplace_back(member, joined->comm);
    }
    LeaveTogether(members, out);
}

void SimulationEngine::OnCommSplit(int rank, const wire::RequestEnvelope& req,
                                   const wire::NcclCommSplit& m, std::vector<OutgoingReply>& out)
{
    const Communicator& parent = m_comms.Get(m.parent);
    PendingWait w;
    w.kind = PendingWait::Kind::CommInit;
    w.seq = req.seq;
    w.callNs = Rank(rank).clockNs;
    w.call = fmt::format("ncclCommSplit(color {}, key {})", m.color, m.key);
    Block(rank, std::move(w));
    if (auto split = m_comms.Split(parent, rank, m.color, m.key))
    {
        LeaveTogether(split->members, out);
    }
}

void SimulationEngine::LeaveTogether(
    const std::vector<std::pair<int, const Communicator*>>& members,
    std::vector<OutgoingReply>& out)
{
    // Communicator creation is collective: every member leaves it when the last one
    // has arrived.
    int64_t at = 0;
    for (const auto& [member, comm] : members)
    {
        at = std::max(at, Rank(member).wait->callNs);
    }
    for (const auto& [member, comm] : members)
    {
        RankState& mr = Rank(member);
        mr.clockNs = std::max(mr.clockNs, at);
        wire::CommReady ready{0, mr.clockNs, 0, 0};
        if (comm)
        {
            ready.comm = comm->handle;
            ready.nranks = static_cast<int32_t>(comm->ranks.size());
            ready.rank = m_comms.MemberIndex(*comm, member);
        }
        Answer(member, mr.wait->seq, ready, out);
    }
}

void SimulationEngine::OnCollective(int rank, const wire::RequestEnvelope&,
                                    const wire::NcclCollective& m)
{
    RankState& r = Rank(rank);
    ++r.collectives;
    r.lastCall = fmt::format("{} of {} bytes", CollectiveName(m.op), m.bytes);
    const Communicator& comm = m_comms.Get(m.comm);
    const int member = m_comms.MemberIndex(comm, rank);
    const uint64_t seq = m_collectiveSeq[{m.comm, rank}]++;
    const uint64_t ticket = m_nextTicket++;
    m_timelines[static_cast<std::size_t>(rank)].EnqueueCollective(
        m.stream, r.clockNs, ticket,
        [this, &comm, seq, member, op = m.op, bytes = m.bytes, ticket, root = m.root](int64_t readyNs)
        { m_matcher.Ready(comm, seq, member, op, bytes, ticket, readyNs, root); },
        fmt::format("{} {} B", CollectiveName(m.op), m.bytes));
}

ns3::NcclPlan SimulationEngine::PlanFor(wire::CollectiveOp op, uint32_t nRanks,
                                        uint64_t bytes) const
{
    ns3::NcclCollectiveKind kind = ns3::NcclCollectiveKind::AllReduce;
    switch (op)
    {
    case wire::CollectiveOp::AllReduce:
        kind = ns3::NcclCollectiveKind::AllReduce;
        break;
    case wire::CollectiveOp::AllGather:
        kind = ns3::NcclCollectiveKind::AllGather;
        break;
    case wire::CollectiveOp::ReduceScatter:
        kind = ns3::NcclCollectiveKind::ReduceScatter;
        break;
    case wire::CollectiveOp::Broadcast:
        kind = ns3::NcclCollectiveKind::Broadcast;
        break;
    case wire::CollectiveOp::Reduce:
        kind = ns3::NcclCollectiveKind::Reduce;
        break;
    case wire::CollectiveOp::AllToAll:
        kind = ns3::NcclCollectiveKind::AllToAll;
        break;
    }
    ns3::NcclCommShape shape;
    shape.nRanks = nRanks;
    shape.ranksPerNode = std::min(nRanks, std::max(m_scenario.topology.gpusPerNode, 1U));
    return ns3::MakeNcclPlan(kind, shape, bytes, m_scenario.nccl);
}

void SimulationEngine::StartMatched(const MatchedCollective& c)
{
    const auto n = static_cast<uint32_t>(c.comm->ranks.size());
    // Plans put the root of a broadcast or reduce at plan rank 0: rotate the ring to it.
    std::vector<uint32_t> gpus;
    gpus.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        gpus.push_back(static_cast<uint32_t>(c.comm->ranks[(i + static_cast<uint32_t>(c.root)) % n]));
    }
    std::vector<std::pair<int, uint64_t>> members;
    for (uint32_t i = 0; i < n; ++i)
    {
        members.emplace_back(c.comm->ranks[i], c.memberTickets[i]);
    }
    m_network.StartCollective(
        c.startNs, PlanFor(c.op, n, c.bytes), std::move(gpus),
        [this, members = std::move(members)](int64_t endNs)
        {
            for (const auto& [rank, ticket] : members)
            {
                m_timelines[static_cast<std::size_t>(rank)].CompleteCollective(ticket, endNs);
            }
        });
}

void SimulationEngine::Release(int rank, int64_t atNs)
{
    RankState& r = Rank(rank);
    if (m_trace && r.wait)
    {
        m_trace->Span(rank, "cpu", r.wait->call, r.wait->callNs, atNs);
    }
    r.wait.reset();
}

void SimulationEngine::Block(int rank, PendingWait wait)
{
    RankState& r = Rank(rank);
    r.lastCall = wait.call;
    r.wait = std::move(wait);
    r.phase = RankPhase::Waiting;
}

void SimulationEngine::Resume(int rank, uint64_t seq, int64_t atNs, std::vector<OutgoingReply>& out)
{
    RankState& r = Rank(rank);
    r.clockNs = std::max(r.clockNs, atNs);
    Answer(rank, seq, wire::Resume{r.clockNs}, out);
}

void SimulationEngine::Answer(int rank, uint64_t seq, wire::Reply reply,
                              std::vector<OutgoingReply>& out)
{
    RankState& r = Rank(rank);
    Release(rank, r.clockNs);
    r.phase = RankPhase::Running;
    out.push_back({rank, {seq, std::move(reply)}});
}

void SimulationEngine::AnswerWaits(std::vector<OutgoingReply>& out)
{
    for (int rank = 0; rank < WorldSize(); ++rank)
    {
        RankState& r = m_ranks[static_cast<std::size_t>(rank)];
        if (r.phase != RankPhase::Waiting)
        {
            continue;
        }
        DeviceTimeline& tl = m_timelines[static_cast<std::size_t>(rank)];
        PendingWait& w = *r.wait;
        switch (w.kind)
        {
        case PendingWait::Kind::CommInit:
            break;
        case PendingWait::Kind::Stream:
            if (auto end = tl.StreamTail(w.stream))
            {
                Resume(rank, w.seq, *end, out);
            }
            break;
        case PendingWait::Kind::Device:
            if (auto end = tl.DeviceTail())
            {
                Resume(rank, w.seq, *end, out);
            }
            break;
        case PendingWait::Kind::EventSync:
            if (auto t = tl.RecordTime(w.record))
            {
                Resume(rank, w.seq, *t, out);
            }
            break;
        case PendingWait::Kind::EventQuery:
            // Final once the record's time is known: done if it is not after the caller's clock.
            if (auto t = tl.RecordTime(w.record))
            {
                Answer(rank, w.seq, wire::QueryAnswer{*t <= w.callNs}, out);
            }
            break;
        case PendingWait::Kind::EventElapsed:
        {
            const auto start = tl.RecordTime(w.record);
            const auto end = tl.RecordTime(w.endRecord);
            if (start && end)
            {
                Answer(rank, w.seq,
                       wire::Elapsed{*end - *start, std::max(*start, *end) <= w.callNs}, out);
            }
            break;
        }
        }
    }
}

int64_t SimulationEngine::Horizon() const
{
    int64_t horizon = NetworkModel::kForever;
    for (const RankState& r : m_ranks)
    {
        if (r.phase == RankPhase::NotConnected || r.phase == RankPhase::Running)
        {
            horizon = std::min(horizon, r.clockNs);
        }
    }
    return horizon;
}

void SimulationEngine::Progress(std::vector<OutgoingReply>& out)
{
    for (;;)
    {
        AnswerWaits(out);
        if (!m_network.RunUntil(Horizon()))
        {
            break;
        }
    }
    CheckDeadlock();
}

void SimulationEngine::RankExited(int rank)
{
    Rank(rank).phase = RankPhase::Exited;
}

bool SimulationEngine::AllDone() const
{
    return std::all_of(m_ranks.begin(), m_ranks.end(),
                       [](const RankState& r) { return r.phase == RankPhase::Exited; });
}

void SimulationEngine::CheckDeadlock() const
{
    bool anyWaiting = false;
    for (const RankState& r : m_ranks)
    {
        if (r.phase == RankPhase::Running || r.phase == RankPhase::NotConnected)
        {
            return; // it may still send what the others wait for
        }
        anyWaiting = anyWaiting || r.phase == RankPhase::Waiting;
    }
    if (!anyWaiting || m_network.Busy())
    {
        return;
    }
    std::string msg = "deadlock: every live rank waits and nothing in flight can release it";
    for (int rank = 0; rank < WorldSize(); ++rank)
    {
        const RankState& r = m_ranks[static_cast<std::size_t>(rank)];
        if (r.phase == RankPhase::Waiting)
        {
            msg += fmt::format("\n  rank {} waits in {} since {} ns", rank, r.wait->call,
                               r.wait->callNs);
        }
        else
        {
            msg += fmt::format("\n  rank {} has {} (last call: {})", rank,
                               r.phase == RankPhase::Exited ? "exited" : "finished", r.lastCall);
        }
    }
    for (const auto& s : m_matcher.Incomplete())
    {
        msg += "\n  " + s;
    }
    for (const auto& s : m_comms.PendingInits())
    {
        msg += "\n  " + s;
    }
    throw SimulationError(msg);
}

} // namespace phantora
