#include "simulation_engine.h"

#include "collective_values.h"
#include "nccl_environment.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

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

SimulationEngine::SimulationEngine(const Scenario& scenario, int worldSize, TraceRecorder* trace,
                                   SyncMode mode)
    : m_scenario(scenario), m_network(scenario), m_kernels(scenario),
      m_ranks(static_cast<std::size_t>(worldSize)),
      m_matcher([this](const MatchedCollective& c) { StartMatched(c); }),
      m_p2p([this](const P2PMatcher::Transfer& t, std::function<void(int64_t)> done)
            { StartTransfer(t, std::move(done)); },
            [this](int rank, uint64_t ticket, int64_t endNs)
            { m_timelines[static_cast<std::size_t>(rank)].CompleteCollective(ticket, endNs); }),
      m_trace(trace), m_mode(mode)
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
    EnterLane(rank, req);
    r.lastCall = wire::RequestName(req.body);
    DeviceTimeline& tl = m_timelines[static_cast<std::size_t>(rank)];
    std::visit(
        Overloaded{
            [&](const wire::Hello& m) { OnHello(rank, req, m, out); },
            [&](const wire::KernelLaunch& m)
            {
                r.lastCall = "kernel " + m.name;
                ++r.kernels;
                tl.EnqueueTimed(m.stream, m_now, m_kernels.Kernel(m).ns, 0, m.name);
            },
            [&](const wire::Memcpy& m) { OnMemcpy(rank, req, m); },
            [&](const wire::Synchronize& m)
            {
                PendingWait w;
                w.kind = m.wholeDevice ? PendingWait::Kind::Device : PendingWait::Kind::Stream;
                w.seq = req.seq;
                w.stream = m.stream;
                w.callNs = m_now;
                w.call = m.wholeDevice ? "cudaDeviceSynchronize"
                                       : fmt::format("cudaStreamSynchronize(stream {})", m.stream);
                Block(rank, std::move(w));
            },
            [&](const wire::NcclCommInit& m) { OnCommInit(rank, req, m, out); },
            [&](const wire::NcclCollective& m) { OnCollective(rank, req, m); },
            [&](const wire::NcclCommDestroy&) {},
            [&](const wire::NcclCommSplit& m) { OnCommSplit(rank, req, m, out); },
            [&](const wire::EventRecord& m) { tl.EnqueueRecord(m.stream, m_now, m.record); },
            [&](const wire::StreamWaitEvent& m) { tl.EnqueueWait(m.stream, m.record); },
            [&](const wire::EventWait& m)
            {
                PendingWait w;
                w.kind = m.query ? PendingWait::Kind::EventQuery : PendingWait::Kind::EventSync;
                w.seq = req.seq;
                w.record = m.record;
                w.callNs = m_now;
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
                w.callNs = m_now;
                w.call = "cudaEventElapsedTime";
                Block(rank, std::move(w));
            },
            [&](const wire::NcclP2P& m) { OnP2P(rank, m); },
            [&](const wire::HostEvent& m) { OnHostEvent(rank, m); },
            [&](const wire::HostFunction& m) { OnHostFunction(rank, m); },
            [&](const wire::HostFunctionDone& m) { OnHostFunctionDone(rank, m); },
            [&](const wire::CollectiveValues& m)
            {
                PendingWait w;
                w.kind = PendingWait::Kind::CollectiveValues;
                w.seq = req.seq;
                w.comm = m.comm;
                w.sequence = m.sequence;
                w.callNs = m_now;
                w.call = fmt::format("reading the result of collective {} on communicator {:#x}",
                                     m.sequence, m.comm);
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
    w.queryOverheadNs = m_scenario.cpu.queryOverheadNs;
    out.push_back({rank, {req.seq, w}, req.lane});
}

void SimulationEngine::OnMemcpy(int rank, const wire::RequestEnvelope& req, const wire::Memcpy& m)
{
    RankState& r = Rank(rank);
    ++r.copies;
    m_timelines[static_cast<std::size_t>(rank)].EnqueueTimed(
        m.stream, m_now, m_kernels.Copy(m.kind, m.bytes, CopyDurationNs(m.kind, m.bytes)).ns, 0,
        CopyLabel(m.kind, m.bytes));
    if (m.blocking)
    {
        // cudaMemcpy: on the legacy default stream (ordered after the blocking
        // streams' work by the timeline), and it returns when the copy is done.
        PendingWait w;
        w.kind = PendingWait::Kind::Stream;
        w.seq = req.seq;
        w.stream = m.stream;
        w.callNs = m_now;
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
    w.callNs = m_now;
    w.call = fmt::format("ncclCommInitRank(nranks {}, rank {})", m.nranks, m.rank);
    Block(rank, std::move(w));
    m_creationTuning[rank] = m.tuning;
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
    SettleNcclConfig(members);
    LeaveTogether(members, out);
}

void SimulationEngine::OnCommSplit(int rank, const wire::RequestEnvelope& req,
                                   const wire::NcclCommSplit& m, std::vector<OutgoingReply>& out)
{
    const Communicator& parent = m_comms.Get(m.parent);
    PendingWait w;
    w.kind = PendingWait::Kind::CommInit;
    w.seq = req.seq;
    w.callNs = m_now;
    w.call = fmt::format("ncclCommSplit(color {}, key {})", m.color, m.key);
    Block(rank, std::move(w));
    m_creationTuning[rank] = m.tuning;
    if (auto split = m_comms.Split(parent, rank, m.color, m.key))
    {
        SettleNcclConfig(split->members);
        LeaveTogether(split->members, out);
    }
}

void SimulationEngine::LeaveTogether(
    const std::vector<std::pair<int, const Communicator*>>& members,
    std::vector<OutgoingReply>& out)
{
    // Communicator creation is collective: every member leaves it when the last one
    // has arrived.  Each member's thread that is in the creation call leaves it (one
    // thread per rank creates communicators at a time).
    auto creator = [this](int member) -> std::pair<uint32_t, LaneState*>
    {
        for (auto& [id, lane] : Rank(member).lanes)
        {
            if (lane.phase == LaneState::Phase::Waiting &&
                lane.wait->kind == PendingWait::Kind::CommInit)
            {
                return {id, &lane};
            }
        }
        throw SimulationError(fmt::format("rank {} has no thread creating a communicator", member));
    };
    int64_t at = 0;
    for (const auto& [member, comm] : members)
    {
        at = std::max(at, creator(member).second->wait->callNs);
    }
    for (const auto& [member, comm] : members)
    {
        auto [id, lane] = creator(member);
        lane->clockNs = std::max(lane->clockNs, at);
        RankState& mr = Rank(member);
        mr.clockNs = std::max(mr.clockNs, lane->clockNs);
        wire::CommReady ready{0, lane->clockNs, 0, 0};
        if (comm)
        {
            ready.comm = comm->handle;
            ready.nranks = static_cast<int32_t>(comm->ranks.size());
            ready.rank = m_comms.MemberIndex(*comm, member);
        }
        Answer(member, id, ready, out);
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
    if (m.hasValues)
    {
        auto [it, fresh] = m_values.try_emplace({m.comm, seq});
        ValueSlot& slot = it->second;
        if (fresh)
        {
            slot.op = m.op;
            slot.type = m.dataType;
            slot.redOp = m.redOp;
            slot.root = m.root;
            slot.inputs.resize(comm.ranks.size());
        }
        if (slot.op == m.op && slot.type == m.dataType && slot.redOp == m.redOp &&
            slot.root == m.root && member >= 0 &&
            static_cast<std::size_t>(member) < slot.inputs.size())
        {
            slot.inputs[static_cast<std::size_t>(member)] = m.values;
            ++slot.unfetched;
        }
    }
    const uint64_t ticket = m_nextTicket++;
    m_ticketOrder[ticket] = {rank, r.collectives};
    m_timelines[static_cast<std::size_t>(rank)].EnqueueCollective(
        m.stream, m_now, ticket,
        [this, &comm, seq, member, op = m.op, bytes = m.bytes, ticket,
         root = m.root](int64_t readyNs)
        { m_matcher.Ready(comm, seq, member, op, bytes, ticket, readyNs, root); },
        fmt::format("{} {} B", CollectiveName(m.op), m.bytes));
}

void SimulationEngine::OnP2P(int rank, const wire::NcclP2P& m)
{
    RankState& r = Rank(rank);
    ++r.collectives;
    const Communicator& comm = m_comms.Get(m.comm);
    const int member = m_comms.MemberIndex(comm, rank);
    uint64_t bytes = 0;
    std::vector<P2PMatcher::Op> ops;
    ops.reserve(m.ops.size());
    for (const wire::P2POp& op : m.ops)
    {
        ops.push_back(m_p2p.Number(comm, member, op));
        bytes += op.bytes;
    }
    r.lastCall = fmt::format("send/recv ({} ops, {} bytes)", m.ops.size(), bytes);
    const uint64_t ticket = m_nextTicket++;
    m_timelines[static_cast<std::size_t>(rank)].EnqueueCollective(
        m.stream, m_now, ticket,
        [this, &comm, member, ticket, ops = std::move(ops)](int64_t readyNs)
        { m_p2p.Ready(comm, member, ticket, ops, readyNs); },
        fmt::format("send/recv {} ops {} B", m.ops.size(), bytes));
}

void SimulationEngine::StartTransfer(const P2PMatcher::Transfer& t,
                                     std::function<void(int64_t)> done)
{
    const auto src = static_cast<uint32_t>(t.comm->ranks[static_cast<std::size_t>(t.from)]);
    const auto dst = static_cast<uint32_t>(t.comm->ranks[static_cast<std::size_t>(t.to)]);
    if (src == dst)
    {
        // A rank's send to itself is a copy inside its own GPU.
        done(t.startNs + CopyDurationNs(wire::CopyKind::DeviceToDevice, t.bytes));
        return;
    }
    // Each matched pair runs as NCCL runs one send/recv; the pairs of one group share the
    // network.  A lone pair gets the channels and protocol NCCL picks for its size; pairs
    // of a group those NCCL picks for the group (as for an all-to-all of its bytes).
    const uint32_t perNode = std::max(m_scenario.topology.gpusPerNode, 1U);
    nccl::CommShape pair;
    pair.nRanks = 2;
    pair.ranksPerNode = src / perNode == dst / perNode ? 2 : 1;
    nccl::Plan plan;
    if (t.groupOps > 1)
    {
        nccl::CommShape group;
        group.nRanks = static_cast<uint32_t>(t.comm->ranks.size());
        group.ranksPerNode = std::min(group.nRanks, perNode);
        plan = nccl::MakePlan(
            nccl::CollectiveKind::SendRecv, pair, t.bytes, NcclFor(*t.comm),
            nccl::Choose(nccl::CollectiveKind::AllToAll, group, t.groupBytes, NcclFor(*t.comm)));
    }
    else
    {
        plan = nccl::MakePlan(nccl::CollectiveKind::SendRecv, pair, t.bytes, NcclFor(*t.comm));
    }
    // Ordered among same-instant starts by who sends what, never by arrival.
    const NetworkModel::OrderKey order{src, (uint64_t{1} << 63) | (uint64_t{dst} << 44) |
                                                (t.sequence & ((uint64_t{1} << 44) - 1))};
    m_network.StartCollective(t.startNs, std::move(plan), {src, dst}, std::move(done), order,
                              fmt::format("send/recv {} B", t.bytes));
}

void SimulationEngine::OnHostFunction(int rank, const wire::HostFunction& m)
{
    const std::pair<int, uint64_t> key{rank, m.id};
    const uint64_t ticket = m_nextTicket++;
    m_hostFunctions[key].ticket = ticket;
    // Held like a collective: ops behind it wait until the host function returned.
    m_timelines[static_cast<std::size_t>(rank)].EnqueueCollective(
        m.stream, m_now, ticket,
        [this, key](int64_t readyNs)
        {
            m_hostFunctions[key].readyNs = readyNs;
            MaybeEndHostFunction(key);
        },
        "host function");
}

void SimulationEngine::OnHostFunctionDone(int rank, const wire::HostFunctionDone& m)
{
    const std::pair<int, uint64_t> key{rank, m.id};
    auto it = m_hostFunctions.find(key);
    if (it == m_hostFunctions.end() || it->second.doneNs)
    {
        throw SimulationError(
            fmt::format("rank {} ended host function {} it never launched", rank, m.id));
    }
    it->second.doneNs = m_now;
    MaybeEndHostFunction(key);
}

void SimulationEngine::MaybeEndHostFunction(std::pair<int, uint64_t> key)
{
    auto it = m_hostFunctions.find(key);
    if (it == m_hostFunctions.end() || !it->second.readyNs || !it->second.doneNs)
    {
        return;
    }
    const HostFunctionHold h = it->second;
    m_hostFunctions.erase(it);
    m_timelines[static_cast<std::size_t>(key.first)].CompleteCollective(
        h.ticket, std::max(*h.readyNs, *h.doneNs));
}

void SimulationEngine::SettleNcclConfig(
    const std::vector<std::pair<int, const Communicator*>>& members)
{
    // Members are listed by communicator; the first listed member of each is the
    // reference the others must match.
    std::map<uint64_t, int> reference;
    for (const auto& [rank, comm] : members)
    {
        if (!comm)
        {
            continue; // NCCL_SPLIT_NOCOLOR
        }
        const wire::NcclTuningEnv& env = m_creationTuning[rank];
        auto [it, first] = reference.emplace(comm->handle, rank);
        if (first)
        {
            try
            {
                m_commNccl[comm->handle] = WithNcclTuningEnv(m_scenario.nccl, env);
            }
            catch (const std::invalid_argument& e)
            {
                throw SimulationError(
                    fmt::format("rank {} created a communicator with {}", rank, e.what()));
            }
            continue;
        }
        const wire::NcclTuningEnv& ref = m_creationTuning[it->second];
        if (!(env == ref))
        {
            throw SimulationError(fmt::format(
                "ranks {} and {} created one communicator with different NCCL settings "
                "(NCCL_ALGO '{}' / '{}', NCCL_PROTO '{}' / '{}', NCCL_MIN_NCHANNELS '{}' / '{}', "
                "NCCL_MAX_NCHANNELS '{}' / '{}'); NCCL needs them equal on every rank",
                it->second, rank, ref.algo, env.algo, ref.proto, env.proto, ref.minChannels,
                env.minChannels, ref.maxChannels, env.maxChannels));
        }
    }
}

const nccl::Config& SimulationEngine::NcclFor(const Communicator& comm) const
{
    auto it = m_commNccl.find(comm.handle);
    return it == m_commNccl.end() ? m_scenario.nccl : it->second;
}

nccl::Plan SimulationEngine::PlanFor(wire::CollectiveOp op, const Communicator& comm,
                                     uint64_t bytes) const
{
    const auto nRanks = static_cast<uint32_t>(comm.ranks.size());
    nccl::CommShape shape;
    shape.nRanks = nRanks;
    shape.ranksPerNode = std::min(nRanks, std::max(m_scenario.topology.gpusPerNode, 1U));
    return nccl::MakePlan(op, shape, bytes, NcclFor(comm));
}

void SimulationEngine::StartMatched(const MatchedCollective& c)
{
    const auto n = static_cast<uint32_t>(c.comm->ranks.size());
    // Plans put the root of a broadcast or reduce at plan rank 0: rotate the ring to it.
    std::vector<uint32_t> gpus;
    gpus.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        gpus.push_back(
            static_cast<uint32_t>(c.comm->ranks[(i + static_cast<uint32_t>(c.root)) % n]));
    }
    std::vector<std::pair<int, uint64_t>> members;
    NetworkModel::OrderKey order{std::numeric_limits<int64_t>::max(), 0};
    for (uint32_t i = 0; i < n; ++i)
    {
        members.emplace_back(c.comm->ranks[i], c.memberTickets[i]);
        auto it = m_ticketOrder.find(c.memberTickets[i]);
        if (it != m_ticketOrder.end())
        {
            order = std::min(order, it->second);
            m_ticketOrder.erase(it);
        }
    }
    m_network.StartCollective(
        c.startNs, PlanFor(c.op, *c.comm, c.bytes), std::move(gpus),
        [this, members = std::move(members)](int64_t endNs)
        {
            for (const auto& [rank, ticket] : members)
            {
                m_timelines[static_cast<std::size_t>(rank)].CompleteCollective(ticket, endNs);
            }
        },
        order, fmt::format("{} {} B on {} ranks", CollectiveName(c.op), c.bytes, n));
}

void SimulationEngine::Release(int rank, uint32_t lane, int64_t atNs)
{
    LaneState& l = Rank(rank).lanes.at(lane);
    if (m_trace && l.wait)
    {
        m_trace->Span(rank, lane == 0 ? std::string("cpu") : fmt::format("cpu thread {}", lane),
                      l.wait->call, l.wait->callNs, atNs);
    }
    l.wait.reset();
}

void SimulationEngine::Block(int rank, PendingWait wait)
{
    RankState& r = Rank(rank);
    LaneState& l = r.lanes.at(m_lane);
    r.lastCall = wait.call;
    wait.lane = m_lane;
    l.wait = std::move(wait);
    l.phase = LaneState::Phase::Waiting;
}

void SimulationEngine::Resume(int rank, uint32_t lane, int64_t atNs,
                              std::vector<OutgoingReply>& out)
{
    RankState& r = Rank(rank);
    LaneState& l = r.lanes.at(lane);
    l.clockNs = std::max(l.clockNs, atNs);
    r.clockNs = std::max(r.clockNs, l.clockNs);
    Answer(rank, lane, wire::Resume{l.clockNs}, out);
}

void SimulationEngine::Answer(int rank, uint32_t lane, wire::Reply reply,
                              std::vector<OutgoingReply>& out)
{
    LaneState& l = Rank(rank).lanes.at(lane);
    const uint64_t seq = l.wait->seq;
    Release(rank, lane, l.clockNs);
    l.phase = LaneState::Phase::Running;
    out.push_back({rank, {seq, std::move(reply)}, lane});
}

LaneState& SimulationEngine::EnterLane(int rank, const wire::RequestEnvelope& req)
{
    RankState& r = Rank(rank);
    auto [it, fresh] = r.lanes.try_emplace(req.lane);
    LaneState& l = it->second;
    if (fresh)
    {
        // A thread nobody announced (it started before the rank connected, or not
        // through pthread_create): simulated time may have moved past its clock.
        l.clockNs = req.clockNs;
        if (r.phase != RankPhase::NotConnected && l.clockNs < m_committedNs)
        {
            l.clockNs = m_committedNs;
            ++r.liftedLanes;
        }
    }
    const bool resumes = std::holds_alternative<wire::HostEvent>(req.body) &&
                         std::get<wire::HostEvent>(req.body).kind == wire::HostEventKind::Resume;
    if (l.phase == LaneState::Phase::Waiting ||
        (l.phase == LaneState::Phase::HostBlocked && !resumes) || l.phase == LaneState::Phase::Gone)
    {
        throw SimulationError(fmt::format(
            "rank {} thread {} sent {} while {}", rank, req.lane, wire::RequestName(req.body),
            l.phase == LaneState::Phase::Gone ? "it had ended"
            : l.phase == LaneState::Phase::Waiting
                ? "blocked in " + (l.wait ? l.wait->call : std::string("a call"))
                : std::string("blocked in a host wait")));
    }
    l.clockNs = std::max(l.clockNs, req.clockNs);
    r.clockNs = std::max(r.clockNs, l.clockNs);
    m_lane = req.lane;
    m_now = l.clockNs;
    m_sentNs = req.clockNs;
    return l;
}

void SimulationEngine::OnHostEvent(int rank, const wire::HostEvent& m)
{
    RankState& r = Rank(rank);
    LaneState& l = r.lanes.at(m_lane);
    switch (m.kind)
    {
    case wire::HostEventKind::Born:
    {
        auto [it, fresh] = r.lanes.try_emplace(m.lane);
        if (!fresh)
        {
            throw SimulationError(
                fmt::format("rank {}: thread {} was started twice", rank, m.lane));
        }
        it->second.clockNs = l.clockNs;
        break;
    }
    case wire::HostEventKind::Block:
        l.phase = LaneState::Phase::HostBlocked;
        l.deadlineNs = m.atNs == wire::kNoTime ? -1 : std::max(m.atNs, l.clockNs);
        break;
    case wire::HostEventKind::Resume:
        if (m.atNs != wire::kNoTime)
        {
            auto wake = r.pendingWakes.find(m.atNs);
            if (wake == r.pendingWakes.end())
            {
                throw SimulationError(fmt::format(
                    "rank {} thread {} took up a wake at {} ns nobody gave", rank, m_lane, m.atNs));
            }
            l.clockNs = std::max(l.clockNs, wake->second);
            r.clockNs = std::max(r.clockNs, l.clockNs);
            r.pendingWakes.erase(wake);
        }
        else if (l.deadlineNs < 0 && l.clockNs < m_committedNs)
        {
            // Woken by nothing the bridge saw (a spurious wake-up, a signal from outside
            // the process): it resumes where simulated time is.
            l.clockNs = m_committedNs;
            ++r.liftedLanes;
        }
        l.phase = LaneState::Phase::Running;
        l.deadlineNs = -1;
        break;
    case wire::HostEventKind::Wake:
        // Keyed by the clock the rank knows; the woken thread resumes no earlier than
        // what this thread's clock is here.
        r.pendingWakes.emplace(m_sentNs, std::max(l.clockNs, m_committedNs));
        break;
    case wire::HostEventKind::Exit:
        // Sent by the thread itself, or by its creator when it could not be started.
        r.lanes[m.lane].phase = LaneState::Phase::Gone;
        break;
    }
}

bool SimulationEngine::AnswerValues(int rank, uint32_t lane, const PendingWait& w,
                                    std::vector<OutgoingReply>& out)
{
    const Communicator& comm = m_comms.Get(w.comm);
    for (int member : comm.ranks)
    {
        auto it = m_collectiveSeq.find({w.comm, member});
        if (it == m_collectiveSeq.end() || it->second <= w.sequence)
        {
            return false; // a member has not issued it yet
        }
    }
    wire::CollectiveResult result;
    auto it = m_values.find({w.comm, w.sequence});
    if (it != m_values.end())
    {
        ValueSlot& slot = it->second;
        if (!slot.computed)
        {
            slot.computed = true;
            slot.results.assign(slot.inputs.size(), std::nullopt);
            if (std::all_of(slot.inputs.begin(), slot.inputs.end(),
                            [](const auto& in) { return in.has_value(); }))
            {
                std::vector<std::string> inputs;
                for (auto& in : slot.inputs)
                {
                    inputs.push_back(std::move(*in));
                }
                slot.results = CollectiveResults(slot.op, slot.type, slot.redOp, slot.root, inputs);
            }
            slot.inputs.clear();
        }
        const int member = m_comms.MemberIndex(comm, rank);
        if (member >= 0 && static_cast<std::size_t>(member) < slot.results.size())
        {
            auto& mine = slot.results[static_cast<std::size_t>(member)];
            if (mine && mine->size() <= wire::kMaxValueBytes)
            {
                result.known = true;
                result.values = std::move(*mine);
            }
            mine.reset();
        }
        if (--slot.unfetched <= 0)
        {
            m_values.erase(it);
        }
    }
    Answer(rank, lane, std::move(result), out);
    return true;
}

void SimulationEngine::AnswerWaits(std::vector<OutgoingReply>& out)
{
    for (int rank = 0; rank < WorldSize(); ++rank)
    {
        RankState& r = m_ranks[static_cast<std::size_t>(rank)];
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        DeviceTimeline& tl = m_timelines[static_cast<std::size_t>(rank)];
        for (auto& [lane, l] : r.lanes)
        {
            if (l.phase != LaneState::Phase::Waiting)
            {
                continue;
            }
            PendingWait& w = *l.wait;
            switch (w.kind)
            {
            case PendingWait::Kind::CommInit:
                break;
            case PendingWait::Kind::Stream:
                if (auto end = tl.StreamTail(w.stream))
                {
                    Resume(rank, lane, *end, out);
                }
                break;
            case PendingWait::Kind::Device:
                if (auto end = tl.DeviceTail())
                {
                    Resume(rank, lane, *end, out);
                }
                break;
            case PendingWait::Kind::EventSync:
                if (auto t = tl.RecordTime(w.record))
                {
                    Resume(rank, lane, *t, out);
                }
                break;
            case PendingWait::Kind::EventQuery:
                // Final once the record's time is known: done if it is not after the caller's
                // clock; or once nothing can complete it by then any more.
                if (auto t = tl.RecordTime(w.record))
                {
                    Answer(rank, lane, wire::QueryAnswer{*t <= w.callNs}, out);
                }
                else if (SettledThrough(w.callNs, l))
                {
                    Answer(rank, lane, wire::QueryAnswer{false}, out);
                }
                break;
            case PendingWait::Kind::CollectiveValues:
                AnswerValues(rank, lane, w, out);
                break;
            case PendingWait::Kind::EventElapsed:
            {
                const auto start = tl.RecordTime(w.record);
                const auto end = tl.RecordTime(w.endRecord);
                if (start && end)
                {
                    Answer(rank, lane,
                           wire::Elapsed{*end - *start, std::max(*start, *end) <= w.callNs}, out);
                }
                else if (SettledThrough(w.callNs, l))
                {
                    Answer(rank, lane, wire::Elapsed{0, false}, out); // cudaErrorNotReady
                }
                break;
            }
            }
        }
    }
}

int64_t SimulationEngine::Horizon() const
{
    // The earliest instant any thread of any rank could still send something at: a
    // running thread at its clock, a thread in a timed host wait at its deadline, a
    // woken thread that has not said so yet at its waker's clock.  Threads waiting for
    // the bridge, or in a host wait only another thread can end, hold nothing back.
    int64_t horizon = NetworkModel::kForever;
    for (const RankState& r : m_ranks)
    {
        if (r.phase == RankPhase::NotConnected)
        {
            horizon = std::min(horizon, r.clockNs);
        }
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        for (const auto& [sent, resumeNs] : r.pendingWakes)
        {
            horizon = std::min(horizon, resumeNs);
        }
        for (const auto& [id, l] : r.lanes)
        {
            if (l.phase == LaneState::Phase::Running)
            {
                horizon = std::min(horizon, l.clockNs);
            }
            else if (l.phase == LaneState::Phase::HostBlocked && l.deadlineNs >= 0)
            {
                horizon = std::min(horizon, l.deadlineNs);
            }
        }
    }
    return horizon;
}

int64_t SimulationEngine::SendBound(const LaneState* except) const
{
    int64_t bound = Horizon();
    // A query is answered at its caller's clock, which then runs on from there.
    for (const RankState& r : m_ranks)
    {
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        for (const auto& [id, l] : r.lanes)
        {
            if (&l != except && l.phase == LaneState::Phase::Waiting &&
                (l.wait->kind == PendingWait::Kind::EventQuery ||
                 l.wait->kind == PendingWait::Kind::EventElapsed ||
                 l.wait->kind == PendingWait::Kind::CollectiveValues))
            {
                bound = std::min(bound, l.wait->callNs);
            }
        }
    }
    // Whatever a rank enqueues at its clock starts on the GPU a launch latency later.
    return bound == NetworkModel::kForever ? bound : bound + m_scenario.gpu.launchLatencyNs;
}

bool SimulationEngine::SettledThrough(int64_t ns, const LaneState& lane) const
{
    return m_settleQueries && SendBound(&lane) > ns && m_network.UndecidedFromNs() > ns;
}

bool SimulationEngine::CommitOne()
{
    const NetworkModel::Completion* next = m_network.NextCompletion();
    if (!next || next->endNs > SendBound())
    {
        return false;
    }
    m_committedNs = std::max(m_committedNs, next->endNs);
    // Tells the timelines (through the collective's DoneFn), which may start more.
    const NetworkModel::Completion done = m_network.TakeCompletion();
    if (m_trace)
    {
        for (const auto& f : done.flows)
        {
            m_trace->NetworkSpan(
                fmt::format("gpu {} -> gpu {}", f.srcGpu, f.dstGpu),
                fmt::format("{}: {} transfers, {} B", done.label, f.transfers, f.bytes), f.startNs,
                f.endNs);
        }
    }
    return true;
}

void SimulationEngine::Progress(std::vector<OutgoingReply>& out)
{
    m_moreToDo = false;
    for (;;)
    {
        const std::size_t answered = out.size();
        AnswerWaits(out);
        if (CommitOne())
        {
            continue;
        }
        if (out.size() > answered && m_mode == SyncMode::Optimistic && m_network.CanAdvance())
        {
            // Released ranks first; the network runs ahead while they compute.
            m_moreToDo = true;
            return;
        }
        const int64_t limit = m_mode == SyncMode::Optimistic ? NetworkModel::kForever : SendBound();
        if (!m_network.Advance(limit))
        {
            // Last, once every other answer is given: queries nothing can complete by
            // their caller's clock any more.  Earlier, a rank about to be answered could
            // still have been about to start what completes them.
            m_settleQueries = true;
            const std::size_t before = out.size();
            AnswerWaits(out);
            m_settleQueries = false;
            if (out.size() == before)
            {
                break;
            }
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
        if (r.phase == RankPhase::NotConnected)
        {
            return; // it may still send what the others wait for
        }
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        if (!r.pendingWakes.empty())
        {
            return;
        }
        for (const auto& [id, l] : r.lanes)
        {
            if (l.phase == LaneState::Phase::Running ||
                (l.phase == LaneState::Phase::HostBlocked && l.deadlineNs >= 0))
            {
                return;
            }
            anyWaiting = anyWaiting || l.phase == LaneState::Phase::Waiting;
        }
    }
    if (!anyWaiting || m_network.Busy())
    {
        return;
    }
    std::string msg = "deadlock: every live rank waits and nothing in flight can release it";
    for (int rank = 0; rank < WorldSize(); ++rank)
    {
        const RankState& r = m_ranks[static_cast<std::size_t>(rank)];
        if (r.phase == RankPhase::Running)
        {
            for (const auto& [id, l] : r.lanes)
            {
                if (l.phase == LaneState::Phase::Waiting)
                {
                    msg += fmt::format("\n  rank {}{} waits in {} since {} ns", rank,
                                       id == 0 ? std::string() : fmt::format(" thread {}", id),
                                       l.wait->call, l.wait->callNs);
                }
                else if (l.phase == LaneState::Phase::HostBlocked)
                {
                    msg += fmt::format("\n  rank {} thread {} is blocked in a host wait", rank, id);
                }
            }
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
    for (const auto& s : m_p2p.Incomplete())
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
