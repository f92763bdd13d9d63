#include "flow-completion-queue.h"

#include "ns3/nstime.h"
#include "ns3/simulator.h"

namespace ns3
{

FlowCompletionQueue::FlowCompletionQueue(std::function<void()> onDue) : m_onDue(std::move(onDue)) {}

FlowCompletionQueue::~FlowCompletionQueue()
{
    // A pending event calls back into this object through a raw pointer.
    m_event.Cancel();
}

void FlowCompletionQueue::Schedule(uint32_t flow, int64_t step)
{
    if (flow >= m_pos.size())
    {
        m_pos.resize(flow + 1, kNone);
    }
    Sift({step, ++m_seq, flow});
}

void FlowCompletionQueue::Sift(const Item& item)
{
    // The keys live in the heap itself, so sifting never reads the flows.
    uint32_t pos = m_pos[item.flow];
    if (pos == kNone)
    {
        pos = static_cast<uint32_t>(m_heap.size());
        m_heap.push_back(item);
    }
    while (pos > 0 && item < m_heap[(pos - 1) / 2])
    {
        m_heap[pos] = m_heap[(pos - 1) / 2];
        m_pos[m_heap[pos].flow] = pos;
        pos = (pos - 1) / 2;
    }
    const auto n = static_cast<uint32_t>(m_heap.size());
    while (true)
    {
        uint32_t child = 2 * pos + 1;
        if (child >= n)
        {
            break;
        }
        if (child + 1 < n && m_heap[child + 1] < m_heap[child])
        {
            ++child;
        }
        if (!(m_heap[child] < item))
        {
            break;
        }
        m_heap[pos] = m_heap[child];
        m_pos[m_heap[pos].flow] = pos;
        pos = child;
    }
    m_heap[pos] = item;
    m_pos[item.flow] = pos;
}

uint32_t FlowCompletionQueue::PopDue(int64_t nowStep)
{
    if (m_heap.empty() || m_heap.front().step > nowStep)
    {
        return kNone;
    }
    const uint32_t top = m_heap.front().flow;
    const Item last = m_heap.back();
    m_heap.pop_back();
    m_pos[top] = kNone;
    if (last.flow != top)
    {
        m_pos[last.flow] = 0;
        Sift(last);
    }
    return top;
}

void FlowCompletionQueue::SyncEvent()
{
    const int64_t next = m_heap.empty() ? -1 : m_heap.front().step;
    if (next == m_eventStep)
    {
        return;
    }
    m_event.Cancel();
    m_eventStep = next;
    if (next >= 0)
    {
        m_event = Simulator::Schedule(TimeStep(next - Simulator::Now().GetTimeStep()),
                                      &FlowCompletionQueue::Fire, this);
    }
}

void FlowCompletionQueue::Fire()
{
    m_eventStep = -1;
    m_onDue();
}

void FlowCompletionQueue::Clear()
{
    m_event.Cancel();
    m_eventStep = -1;
    m_heap.clear();
    m_pos.clear();
}

} // namespace ns3
