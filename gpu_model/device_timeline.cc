#include "device_timeline.h"

#include "protocol/streams.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace phantora
{

DeviceTimeline::DeviceTimeline(int64_t launchLatencyNs, int32_t smCount, StreamGap gap)
    : m_launchLatencyNs(launchLatencyNs), m_gap(gap), m_sms(smCount)
{
}

int64_t DeviceTimeline::EarliestStart(const Stream& s, const PendingOp& op) const
{
    return std::max({op.enqueueNs + m_launchLatencyNs, s.tailNs, op.notBeforeNs});
}

int64_t DeviceTimeline::OpStart(Stream& s, const PendingOp& op)
{
    const int64_t start = EarliestStart(s, op);
    // The tail holds the gap alone; the front end's time on blocked streams comes on top,
    // and only where the op follows its predecessor back to back.
    if (m_gap.besideBlockedNs == 0 || !s.tailAfterOp || start != s.tailNs)
    {
        return start;
    }
    if (BlockedStreamsBeside(s.id, s.tailNs) >= StreamGap::kBlockedStreams)
    {
        m_blockedGapNs += m_gap.besideBlockedNs;
        return start + m_gap.besideBlockedNs;
    }
    s.uncharged.push_back(start);
    if (s.uncharged.size() > kKept)
    {
        s.uncharged.pop_front();
    }
    return start;
}

void DeviceTimeline::Block(Stream& s, int64_t fromNs, int64_t toNs)
{
    if (!s.blocked.empty() && s.blocked.back().second == kOpen)
    {
        // The event is placed now: ops started beside the block before it was known.
        auto& open = s.blocked.back();
        open.second = std::max(open.first, toNs);
        ChargeBlockedGaps(s.id, open.first, open.second);
        return;
    }
    if (toNs <= fromNs)
    {
        return;
    }
    s.blocked.emplace_back(fromNs, toNs);
    if (s.blocked.size() > kKept)
    {
        s.blocked.pop_front();
    }
    if (toNs != kOpen)
    {
        ChargeBlockedGaps(s.id, fromNs, toNs);
    }
}

void DeviceTimeline::ChargeBlockedGaps(uint64_t blocked, int64_t fromNs, int64_t toNs)
{
    if (m_gap.besideBlockedNs == 0)
    {
        return;
    }
    // The host issues a wait after the ops that run while it blocks (it is ahead of the
    // GPU), so those ops were placed without it; they pay here, and their stream's later
    // work moves back by as much, as SmSharing::Reflow moves work that a collective slowed.
    for (auto& [id, other] : m_streams)
    {
        if (id == blocked)
        {
            continue;
        }
        int64_t delay = 0;
        for (auto it = other.uncharged.begin(); it != other.uncharged.end();)
        {
            if (*it >= fromNs && *it < toNs &&
                BlockedStreamsBeside(id, *it) >= StreamGap::kBlockedStreams)
            {
                delay += m_gap.besideBlockedNs;
                it = other.uncharged.erase(it);
            }
            else
            {
                ++it;
            }
        }
        if (delay > 0)
        {
            other.tailNs += delay;
            other.forecastNs = std::max(other.forecastNs, other.tailNs);
            m_blockedGapNs += delay;
        }
    }
}

int DeviceTimeline::BlockedStreamsBeside(uint64_t stream, int64_t atNs) const
{
    int n = 0;
    for (const auto& [id, other] : m_streams)
    {
        if (id == stream)
        {
            continue;
        }
        // A stream's blocks follow one another in time without overlapping (a wait is
        // reached no earlier than the previous one's release), so the latest that began
        // by atNs is the only one that can hold it.
        for (auto it = other.blocked.rbegin(); it != other.blocked.rend(); ++it)
        {
            if (it->first <= atNs)
            {
                n += atNs < it->second ? 1 : 0;
                break;
            }
        }
    }
    return n;
}

void DeviceTimeline::Push(uint64_t stream, PendingOp op)
{
    if (stream == wire::kLegacyStream)
    {
        for (auto& [id, other] : m_streams)
        {
            if (id != wire::kLegacyStream && other.sinceLegacy)
            {
                other.sinceLegacy = false;
                Order(id, wire::kLegacyStream, op.enqueueNs);
            }
        }
        PushRaw(stream, std::move(op));
        ++m_legacyOps;
        return;
    }
    if (!wire::IsNonBlocking(stream))
    {
        Stream& s = m_streams[stream];
        if (s.legacySeen < m_legacyOps)
        {
            s.legacySeen = m_legacyOps;
            Order(wire::kLegacyStream, stream, op.enqueueNs);
        }
        m_streams[stream].sinceLegacy = true;
    }
    PushRaw(stream, std::move(op));
}

void DeviceTimeline::Order(uint64_t target, uint64_t waiter, int64_t enqueueNs)
{
    // Implicit records live in the top half of the id space, apart from the program's.
    const uint64_t record = (uint64_t{1} << 63) | m_nextImplicit++;
    m_records[record] = std::nullopt;
    PushRaw(target, {PendingOp::Kind::Record, enqueueNs, 0, 0, record, nullptr});
    PushRaw(waiter, {PendingOp::Kind::Wait, enqueueNs, 0, 0, record, nullptr});
}

void DeviceTimeline::PushRaw(uint64_t stream, PendingOp op)
{
    Stream& s = m_streams[stream];
    s.id = stream;
    s.waiting.push_back(std::move(op));
    if (s.waiting.size() == 1)
    {
        Drain(s);
    }
}

void DeviceTimeline::EnqueueTimed(uint64_t stream, int64_t enqueueNs, int64_t durationNs,
                                  int64_t notBeforeNs, std::string label, uint64_t ctas,
                                  bool memoryBound, bool graphNode)
{
    PendingOp op{PendingOp::Kind::Timed, enqueueNs, durationNs, notBeforeNs, 0, nullptr,
                 std::move(label)};
    op.ctas = ctas;
    op.memoryBound = memoryBound;
    op.graphNode = graphNode;
    Push(stream, std::move(op));
}

void DeviceTimeline::EnqueueCollective(uint64_t stream, int64_t enqueueNs, uint64_t ticket,
                                       ReadyCallback onReady, std::string label, uint32_t channels,
                                       int64_t expectedNs)
{
    m_ticketStream[ticket] = stream;
    PendingOp op{PendingOp::Kind::Collective, enqueueNs,       0, 0, ticket,
                 std::move(onReady),          std::move(label)};
    op.channels = channels;
    op.expectedNs = expectedNs;
    if (channels > 0 && m_sms.Enabled())
    {
        // Queued behind unfinished work, it will take its SMs when that work ends: the
        // kernels placed meanwhile on other streams are slowed from the forecast instant
        // (replaced by the real one when it starts).
        // It cannot start before the events its stream waits for either; when one of them
        // is not placed yet there is no forecast, and Reflow() charges what ran beside it
        // once it ends.
        Stream& s = m_streams[stream];
        if (!s.waiting.empty())
        {
            std::optional<int64_t> from = std::max(enqueueNs + m_launchLatencyNs, s.forecastNs);
            for (const PendingOp& queued : s.waiting)
            {
                if (queued.kind == PendingOp::Kind::Wait)
                {
                    const auto recorded = RecordTime(queued.id);
                    from = recorded ? std::max(*from, *recorded) : std::optional<int64_t>();
                    if (!from)
                    {
                        break;
                    }
                }
            }
            if (from)
            {
                m_sms.AddCollective(ticket, *from, *from + expectedNs, channels);
                s.forecastNs = *from + expectedNs;
            }
        }
    }
    Push(stream, std::move(op));
}

void DeviceTimeline::EnqueueRecord(uint64_t stream, int64_t enqueueNs, uint64_t record)
{
    m_records[record] = std::nullopt;
    Push(stream, {PendingOp::Kind::Record, enqueueNs, 0, 0, record, nullptr});
}

void DeviceTimeline::EnqueueWait(uint64_t stream, uint64_t record, int64_t enqueueNs)
{
    Push(stream, {PendingOp::Kind::Wait, enqueueNs, 0, 0, record, nullptr});
}

std::optional<int64_t> DeviceTimeline::RecordTime(uint64_t record) const
{
    auto it = m_records.find(record);
    return it == m_records.end() ? std::optional<int64_t>(0) : it->second;
}

void DeviceTimeline::Drain(Stream& s)
{
    while (!s.waiting.empty())
    {
        PendingOp& op = s.waiting.front();
        switch (op.kind)
        {
        case PendingOp::Kind::Collective:
        {
            ++m_collectives;
            // Stays at the front until the network reports its end.
            op.startNs = OpStart(s, op);
            if (op.channels > 0)
            {
                op.startNs = m_sms.CollectiveStart(s.id, op.startNs, op.channels);
                m_sms.AddCollective(op.id, op.startNs, op.startNs + op.expectedNs, op.channels);
                s.forecastNs = std::max(s.forecastNs, op.startNs + op.expectedNs);
            }
            auto onReady = std::move(op.onReady);
            onReady(op.startNs);
            return;
        }
        case PendingOp::Kind::Wait:
        {
            const auto t = RecordTime(op.id);
            // The GPU reaches the wait once the stream's earlier work is done and the host
            // has issued it; from then until the event it sits blocked.
            const int64_t reached = std::max(s.tailNs, op.enqueueNs + m_launchLatencyNs);
            if (!t)
            {
                Block(s, reached, kOpen);
                // Resumed by the record's stream when it gets there.
                m_waiters[op.id].push_back(s.id);
                return;
            }
            Block(s, reached, *t);
            if (*t > s.tailNs)
            {
                s.tailNs = *t;
                s.tailAfterOp = false;
            }
            s.waiting.pop_front();
            break;
        }
        case PendingOp::Kind::Record:
        {
            const int64_t t = EarliestStart(s, op);
            s.tailNs = t;
            const uint64_t record = op.id;
            s.waiting.pop_front();
            m_records[record] = t;
            auto waiters = m_waiters.extract(record);
            if (!waiters.empty())
            {
                for (uint64_t other : waiters.mapped())
                {
                    Drain(m_streams[other]);
                }
            }
            break;
        }
        case PendingOp::Kind::Timed:
        {
            const int64_t start = OpStart(s, op);
            int64_t end = start + op.durationNs;
            if (op.ctas > 0)
            {
                end = m_sms.KernelEnd(start, op.durationNs, op.ctas);
                m_sms.AddKernel(s.id, start, end, op.ctas);
            }
            // The stream is the op's until the gap after it has passed: what follows on it
            // (an op, an event's record) comes no earlier.
            s.tailNs = end + (op.graphNode ? m_gap.graphNodeNs : m_gap.ns);
            s.tailAfterOp = true;
            m_busyNs += end - start;
            s.forecastNs = std::max(s.forecastNs, s.tailNs);
            m_computeSpans.Add(start, end);
            if (op.memoryBound)
            {
                m_hbm.Add(start, end);
            }
            if (m_observer)
            {
                m_observer(s.id, op.label, start, end);
            }
            ++m_timedOps;
            s.waiting.pop_front();
            break;
        }
        }
    }
}

void DeviceTimeline::CompleteCollective(uint64_t ticket, int64_t endNs, int64_t smsFreedNs)
{
    auto it = m_ticketStream.find(ticket);
    if (it == m_ticketStream.end())
    {
        throw std::logic_error("collective ticket " + std::to_string(ticket) + " is not running");
    }
    Stream& s = m_streams[it->second];
    m_ticketStream.erase(it);
    if (s.waiting.empty() || s.waiting.front().kind != PendingOp::Kind::Collective ||
        s.waiting.front().id != ticket)
    {
        throw std::logic_error("collective ticket " + std::to_string(ticket) +
                               " completed but is not at the head of its stream");
    }
    s.tailNs = std::max(s.tailNs, endNs + m_gap.ns);
    s.tailAfterOp = true;
    const int64_t networkEndNs = smsFreedNs < 0 ? endNs : std::min(smsFreedNs, endNs);
    const int64_t startNs = s.waiting.front().startNs;
    m_collectiveNetworkNs += std::max<int64_t>(networkEndNs - startNs, 0);
    m_collectiveInSituNs += std::max<int64_t>(endNs - startNs, 0);
    m_sms.FinishCollective(ticket, networkEndNs);
    s.forecastNs = std::max(s.forecastNs, endNs);
    // Work placed on other streams before this collective was known ran beside it.
    for (const auto& [other, ends] : m_sms.Reflow(ticket, s.id))
    {
        Stream& o = m_streams[other];
        const auto [oldEnd, newEnd] = ends;
        // What followed the stream's last kernel (a copy, a record) follows it still.
        o.tailNs = o.tailNs > oldEnd ? o.tailNs + (newEnd - oldEnd) : std::max(o.tailNs, newEnd);
        o.forecastNs = std::max(o.forecastNs, o.tailNs);
    }
    m_collectiveSpans.Add(s.waiting.front().startNs, endNs);
    if (m_observer)
    {
        m_observer(s.id, s.waiting.front().label, s.waiting.front().startNs, endNs);
    }
    s.waiting.pop_front();
    Drain(s);
}

std::optional<int64_t> DeviceTimeline::StreamTail(uint64_t stream) const
{
    auto it = m_streams.find(stream);
    if (it == m_streams.end())
    {
        return 0;
    }
    if (!it->second.waiting.empty())
    {
        return std::nullopt;
    }
    return it->second.tailNs;
}

std::optional<int64_t> DeviceTimeline::DeviceTail() const
{
    int64_t tail = 0;
    for (const auto& [id, s] : m_streams)
    {
        if (!s.waiting.empty())
        {
            return std::nullopt;
        }
        tail = std::max(tail, s.tailNs);
    }
    return tail;
}

} // namespace phantora
