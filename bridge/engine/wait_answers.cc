#include "engine/wait_answers.h"

#include <algorithm>

namespace phantora
{

WaitAnswers::WaitAnswers(Lanes& lanes, const std::vector<DeviceTimeline>& timelines,
                         const CommitPolicy& commit, const CommunicatorRegistry& comms,
                         const CollectiveLaunch& launch, CollectiveValueStore& values,
                         P2PValueStore& p2pValues)
    : m_lanes(lanes), m_timelines(timelines), m_commit(commit), m_comms(comms), m_launch(launch),
      m_values(values), m_p2pValues(p2pValues)
{
}

void WaitAnswers::AnswerAll(std::vector<OutgoingReply>& out, QueryRule rule)
{
    const bool settle = rule == QueryRule::SettleUnreachable;
    for (int rank = 0; rank < m_lanes.WorldSize(); ++rank)
    {
        RankState& r = m_lanes.Rank(rank);
        if (r.phase != RankPhase::Running)
        {
            continue;
        }
        const DeviceTimeline& tl = m_timelines[static_cast<std::size_t>(rank)];
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
                    m_lanes.Resume(rank, lane, *end, out);
                }
                break;
            case PendingWait::Kind::Device:
                if (auto end = tl.DeviceTail())
                {
                    m_lanes.Resume(rank, lane, *end, out);
                }
                break;
            case PendingWait::Kind::EventSync:
                if (auto t = tl.RecordTime(w.record))
                {
                    m_lanes.Resume(rank, lane, *t, out);
                }
                break;
            case PendingWait::Kind::EventQuery:
                // Final once the record's time is known: done if it is not after the caller's
                // clock; or once nothing can complete it by then any more.
                if (auto t = tl.RecordTime(w.record))
                {
                    m_lanes.Answer(rank, lane, wire::QueryAnswer{*t <= w.callNs}, out);
                }
                else if (settle && m_commit.SettledThrough(w.callNs, l))
                {
                    m_lanes.Answer(rank, lane, wire::QueryAnswer{false}, out);
                }
                break;
            case PendingWait::Kind::CollectiveValues:
                AnswerValues(rank, lane, w, out);
                break;
            case PendingWait::Kind::P2PValues:
                AnswerP2PValues(rank, lane, w, out);
                break;
            case PendingWait::Kind::EventElapsed:
            {
                const auto start = tl.RecordTime(w.record);
                const auto end = tl.RecordTime(w.endRecord);
                if (start && end)
                {
                    m_lanes.Answer(rank, lane,
                                   wire::Elapsed{*end - *start, std::max(*start, *end) <= w.callNs},
                                   out);
                }
                else if (settle && m_commit.SettledThrough(w.callNs, l))
                {
                    m_lanes.Answer(rank, lane, wire::Elapsed{0, false}, out); // cudaErrorNotReady
                }
                break;
            }
            }
        }
    }
}

void WaitAnswers::AnswerValues(int rank, uint32_t lane, const PendingWait& w,
                               std::vector<OutgoingReply>& out)
{
    const Communicator& comm = m_comms.Get(w.comm);
    if (!m_launch.AllIssued(comm, w.sequence))
    {
        return;
    }
    wire::CollectiveResult result;
    if (m_values.Holds(w.comm, w.sequence))
    {
        result = m_values.Take(w.comm, w.sequence, m_comms.MemberIndex(comm, rank));
    }
    // The values exist once the last member issued the collective: the reader resumes
    // there, as CommitPolicy::SendBound assumed while it waited (on a GPU the read would
    // wait for the collective, which waits for that member).
    RankState& r = m_lanes.Rank(rank);
    LaneState& l = r.lanes.at(lane);
    l.clockNs = std::max(l.clockNs, m_commit.ValuesResumeBound(w.comm, w.sequence, w.callNs));
    r.clockNs = std::max(r.clockNs, l.clockNs);
    result.clockNs = l.clockNs;
    m_lanes.Answer(rank, lane, std::move(result), out);
}

void WaitAnswers::AnswerP2PValues(int rank, uint32_t lane, const PendingWait& w,
                                  std::vector<OutgoingReply>& out)
{
    const Communicator& comm = m_comms.Get(w.comm);
    const int me = m_comms.MemberIndex(comm, rank);
    if (!m_launch.SendIssueNs(w.comm, w.peer, me, w.sequence))
    {
        return;
    }
    wire::CollectiveResult result = m_p2pValues.Take(w.comm, w.peer, me, w.sequence);
    // The bytes exist once the peer issued the send (CommitPolicy::SendBound assumed so).
    RankState& r = m_lanes.Rank(rank);
    LaneState& l = r.lanes.at(lane);
    l.clockNs = std::max(l.clockNs,
                         m_commit.P2PValuesResumeBound(rank, w.comm, w.peer, w.sequence, w.callNs));
    r.clockNs = std::max(r.clockNs, l.clockNs);
    result.clockNs = l.clockNs;
    m_lanes.Answer(rank, lane, std::move(result), out);
}

} // namespace phantora
