#include "gpu_timeline.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace phantora
{

DeviceTimeline::DeviceTimeline(int64_t launchLatencyNs) : m_launchLatencyNs(launchLatencyNs) {}

int64_t DeviceTimeline::EarliestStart(const Stream& s, const PendingOp& op) const
{
    return std::max({op.enqueueNs + m_launchLatencyNs, s.tailNs, op.notBeforeNs});
}

void DeviceTimeline::EnqueueTimed(uint64_t stream, int64_t enqueueNs, int64_t durationNs,
                                  int64_t notBeforeNs)
{
    Stream& s = m_streams[stream];
    s.waiting.push_back({enqueueNs, durationNs, notBeforeNs, std::nullopt, nullptr});
    if (s.waiting.size() == 1)
    {
        Drain(s);
    }
}

void DeviceTimeline::EnqueueCollective(uint64_t stream, int64_t enqueueNs, uint64_t ticket,
                                       ReadyCallback onReady)
{
    Stream& s = m_streams[stream];
    m_ticketStream[ticket] = stream;
    s.waiting.push_back({enqueueNs, 0, 0, ticket, std::move(onReady)});
    if (s.waiting.size() == 1)
    {
        Drain(s);
    }
}

void DeviceTimeline::Drain(Stream& s)
{
    while (!s.waiting.empty())
    {
        PendingOp& op = s.waiting.front();
        const int64_t start = EarliestStart(s, op);
        if (op.ticket)
        {
            ++m_collectives;
            // Stays at the front until the network reports its end.
            auto onReady = std::move(op.onReady);
            onReady(start);
            return;
        }
        s.tailNs = start + op.durationNs;
        m_busyNs += op.durationNs;
        ++m_timedOps;
        s.waiting.pop_front();
    }
}

void DeviceTimeline::CompleteCollective(uint64_t ticket, int64_t endNs)
{
    auto it = m_ticketStream.find(ticket);
    if (it == m_ticketStream.end())
    {
        throw std::logic_error("collective ticket " + std::to_string(ticket) + " is not running");
    }
    Stream& s = m_streams[it->second];
    m_ticketStream.erase(it);
    if (s.waiting.empty() || s.waiting.front().ticket != ticket)
    {
        throw std::logic_error("collective ticket " + std::to_string(ticket) +
                               " completed but is not at the head of its stream");
    }
    s.tailNs = std::max(s.tailNs, endNs);
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
