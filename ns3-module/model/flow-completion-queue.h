#ifndef FLOW_COMPLETION_QUEUE_H
#define FLOW_COMPLETION_QUEUE_H

#include "ns3/event-id.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief When each of a FlowTransport's flows drains its last wire byte, under one
 * simulator event for the earliest.
 *
 * One ns-3 event for the earliest completion instead of one per flow: a rate change then
 * costs a sift here rather than a cancelled event plus a new one in the simulator.
 * Completions at the same Time step come out in the order they were scheduled.
 */
class FlowCompletionQueue
{
public:
    static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

    /// \p onDue runs when the simulator reaches the earliest completion (see SyncEvent).
    explicit FlowCompletionQueue(std::function<void()> onDue);
    ~FlowCompletionQueue();
    FlowCompletionQueue(const FlowCompletionQueue&) = delete;
    FlowCompletionQueue& operator=(const FlowCompletionQueue&) = delete;

    /// Flow \p flow drains at Time step \p step (replacing its earlier completion, if any).
    void Schedule(uint32_t flow, int64_t step);
    /// Takes a flow whose completion is at or before \p nowStep, or returns kNone.
    uint32_t PopDue(int64_t nowStep);
    /// Keeps the simulator event at the earliest completion; call after Schedule / PopDue.
    void SyncEvent();
    /// Forgets every completion and cancels the event.
    void Clear();

private:
    /// A flow in the heap; ties drain in the order they were scheduled.
    struct Item
    {
        int64_t step;
        uint64_t seq;
        uint32_t flow;

        bool operator<(const Item& o) const
        {
            return step < o.step || (step == o.step && seq < o.seq);
        }
    };

    void Sift(const Item& item);
    void Fire();

    std::function<void()> m_onDue;
    std::vector<Item> m_heap;
    std::vector<uint32_t> m_pos; ///< per flow id: its index in m_heap, kNone when absent
    uint64_t m_seq{0};
    EventId m_event;
    int64_t m_eventStep{-1}; ///< step m_event fires at, -1 when none
};

} // namespace ns3

#endif
