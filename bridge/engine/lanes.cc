#include "engine/lanes.h"

#include "engine/simulation_error.h"

#include <algorithm>
#include <fmt/format.h>
#include <string>
#include <variant>

namespace phantora
{

Lanes::Lanes(int worldSize, TraceRecorder* trace)
    : m_ranks(static_cast<std::size_t>(worldSize)), m_trace(trace)
{
}

RankState& Lanes::Rank(int rank)
{
    if (rank < 0 || rank >= WorldSize())
    {
        throw SimulationError(fmt::format("rank {} is outside the world of {}", rank, WorldSize()));
    }
    return m_ranks[static_cast<std::size_t>(rank)];
}

RequestContext Lanes::Enter(int rank, const wire::RequestEnvelope& req, int64_t committedNs,
                            std::vector<OutgoingReply>& out)
{
    RankState& r = Rank(rank);
    auto [it, fresh] = r.lanes.try_emplace(req.lane);
    LaneState& l = it->second;
    if (fresh)
    {
        // A thread nobody announced (it started before the rank connected, or not
        // through pthread_create): simulated time may have moved past its clock.
        l.clockNs = req.clockNs;
        if (r.phase != RankPhase::NotConnected && l.clockNs < committedNs)
        {
            l.clockNs = committedNs;
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
    return RequestContext{rank, req.lane, l.clockNs, req.clockNs, req.seq, out, req.graphNode};
}

void Lanes::OnHostEvent(const RequestContext& ctx, const wire::HostEvent& m, int64_t committedNs)
{
    RankState& r = Rank(ctx.rank);
    LaneState& l = r.lanes.at(ctx.lane);
    switch (m.kind)
    {
    case wire::HostEventKind::Born:
    {
        auto [it, fresh] = r.lanes.try_emplace(m.lane);
        if (!fresh)
        {
            throw SimulationError(
                fmt::format("rank {}: thread {} was started twice", ctx.rank, m.lane));
        }
        it->second.clockNs = l.clockNs;
        break;
    }
    case wire::HostEventKind::Block:
        l.phase = LaneState::Phase::HostBlocked;
        l.deadlineNs = m.atNs == wire::kNoTime ? -1 : std::max(m.atNs, l.clockNs);
        break;
    case wire::HostEventKind::BlockOutside:
        l.phase = LaneState::Phase::HostBlocked;
        l.deadlineNs = -1;
        l.outside = true;
        break;
    case wire::HostEventKind::Resume:
        if (m.atNs != wire::kNoTime)
        {
            auto wake = r.pendingWakes.find(m.atNs);
            if (wake == r.pendingWakes.end())
            {
                throw SimulationError(
                    fmt::format("rank {} thread {} took up a wake at {} ns nobody gave", ctx.rank,
                                ctx.lane, m.atNs));
            }
            l.clockNs = std::max(l.clockNs, wake->second);
            r.clockNs = std::max(r.clockNs, l.clockNs);
            r.pendingWakes.erase(wake);
        }
        else if (l.deadlineNs < 0 && l.clockNs < committedNs)
        {
            // Woken by nothing the bridge saw (a spurious wake-up, a signal from outside
            // the process): it resumes where simulated time is.
            l.clockNs = committedNs;
            ++r.liftedLanes;
        }
        l.phase = LaneState::Phase::Running;
        l.deadlineNs = -1;
        l.outside = false;
        break;
    case wire::HostEventKind::Wake:
        // Keyed by the clock the rank knows; the woken thread resumes no earlier than
        // what this thread's clock is here.
        r.pendingWakes.emplace(ctx.sentNs, std::max(l.clockNs, committedNs));
        break;
    case wire::HostEventKind::Exit:
        // Sent by the thread itself, or by its creator when it could not be started.
        r.lanes[m.lane].phase = LaneState::Phase::Gone;
        break;
    }
}

void Lanes::Block(const RequestContext& ctx, PendingWait wait)
{
    RankState& r = Rank(ctx.rank);
    LaneState& l = r.lanes.at(ctx.lane);
    r.lastCall = wait.call;
    wait.lane = ctx.lane;
    wait.seq = ctx.seq;
    wait.callNs = ctx.nowNs;
    l.wait = std::move(wait);
    l.phase = LaneState::Phase::Waiting;
}

void Lanes::Resume(int rank, uint32_t lane, int64_t atNs, std::vector<OutgoingReply>& out)
{
    RankState& r = Rank(rank);
    LaneState& l = r.lanes.at(lane);
    l.clockNs = std::max(l.clockNs, atNs);
    r.clockNs = std::max(r.clockNs, l.clockNs);
    Answer(rank, lane, wire::Resume{l.clockNs}, out);
}

void Lanes::Answer(int rank, uint32_t lane, wire::Reply reply, std::vector<OutgoingReply>& out)
{
    LaneState& l = Rank(rank).lanes.at(lane);
    const uint64_t seq = l.wait->seq;
    Release(rank, lane, l.clockNs);
    l.phase = LaneState::Phase::Running;
    out.push_back({rank, {seq, std::move(reply)}, lane});
}

void Lanes::Release(int rank, uint32_t lane, int64_t atNs)
{
    LaneState& l = Rank(rank).lanes.at(lane);
    if (m_trace && l.wait)
    {
        m_trace->Span(rank, lane == 0 ? std::string("cpu") : fmt::format("cpu thread {}", lane),
                      l.wait->call, l.wait->callNs, atNs);
    }
    l.wait.reset();
}

} // namespace phantora
