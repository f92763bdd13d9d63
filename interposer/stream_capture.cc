#include "stream_capture.h"

#include "never_destroyed.h"
#include "protocol/streams.h"

#include <algorithm>
#include <set>

namespace phantora::interposer
{

namespace
{
constinit NeverDestroyed<StreamCapture> g_capture;
thread_local CaptureMode t_mode = CaptureMode::Global;

void Merge(std::vector<CUgraphNode_st*>& into, const std::vector<CUgraphNode_st*>& more)
{
    for (CUgraphNode_st* n : more)
    {
        if (std::find(into.begin(), into.end(), n) == into.end())
        {
            into.push_back(n);
        }
    }
}
} // namespace

std::atomic<int> StreamCapture::s_active{0};

StreamCapture& StreamCapture::Get()
{
    return *g_capture;
}

StreamCapture::StreamState* StreamCapture::Find(uint64_t stream)
{
    auto it = m_streams.find(stream);
    return it == m_streams.end() ? nullptr : &it->second;
}

CUgraphNode_st* StreamCapture::AddNode(StreamState& s, GraphNodeKind kind)
{
    CUgraphNode_st* n = s.capture->graph->Add(kind, s.deps);
    s.deps = {n};
    return n;
}

CaptureError StreamCapture::Begin(uint64_t stream, CaptureMode mode)
{
    if (stream == wire::kLegacyStream)
    {
        return CaptureError::LegacyStream;
    }
    std::lock_guard lock(m_mutex);
    if (Find(stream))
    {
        return CaptureError::AlreadyCapturing;
    }
    auto c = std::make_shared<Session>();
    c->id = m_nextId++;
    c->graph = std::make_unique<CUgraph_st>();
    c->mode = mode;
    c->thread = std::this_thread::get_id();
    c->origin = stream;
    m_streams[stream] = StreamState{c, {}};
    m_captures.push_back(std::move(c));
    s_active.fetch_add(1, std::memory_order_release);
    return CaptureError::None;
}

StreamCapture::Ended StreamCapture::End(uint64_t stream)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    if (!s)
    {
        return {CaptureError::NotCapturing, nullptr};
    }
    std::shared_ptr<Session> c = s->capture;
    if (c->origin != stream)
    {
        return {CaptureError::NotOrigin, nullptr};
    }
    if (c->mode != CaptureMode::Relaxed && c->thread != std::this_thread::get_id())
    {
        return {CaptureError::WrongThread, nullptr};
    }
    // Every node must come before the origin's last work: what the origin's dependencies
    // do not reach was forked and never joined back.
    std::set<const CUgraphNode_st*> reached;
    std::vector<const CUgraphNode_st*> todo(s->deps.begin(), s->deps.end());
    while (!todo.empty())
    {
        const CUgraphNode_st* n = todo.back();
        todo.pop_back();
        if (reached.insert(n).second)
        {
            todo.insert(todo.end(), n->deps.begin(), n->deps.end());
        }
    }
    const bool unjoined = reached.size() != c->graph->nodes.size();
    for (auto it = m_streams.begin(); it != m_streams.end();)
    {
        it = it->second.capture == c ? m_streams.erase(it) : std::next(it);
    }
    m_captures.erase(std::find(m_captures.begin(), m_captures.end(), c));
    s_active.fetch_sub(1, std::memory_order_release);
    if (c->invalidated)
    {
        return {CaptureError::Invalidated, nullptr};
    }
    if (unjoined)
    {
        return {CaptureError::Unjoined, nullptr};
    }
    return {CaptureError::None, std::move(c->graph)};
}

StreamCapture::Info StreamCapture::Query(uint64_t stream)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    if (!s)
    {
        return {};
    }
    const Session& c = *s->capture;
    return {c.invalidated ? CaptureStatus::Invalidated : CaptureStatus::Active, c.id, c.graph.get(),
            &s->deps};
}

bool StreamCapture::Capture(const wire::Request& request)
{
    wire::Request copy = request;
    const uint64_t* stream = StreamOf(copy);
    if (!stream)
    {
        return false;
    }
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(*stream);
    if (!s)
    {
        return false;
    }
    if (!s->capture->invalidated)
    {
        AddNode(*s, GraphNodeKind::Op)->op = std::move(copy);
    }
    return true;
}

bool StreamCapture::CaptureHost(uint64_t stream, std::function<void()> fn)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    if (!s)
    {
        return false;
    }
    if (!s->capture->invalidated)
    {
        AddNode(*s, GraphNodeKind::Host)->host = std::move(fn);
    }
    return true;
}

bool StreamCapture::CaptureChild(uint64_t stream, std::unique_ptr<CUgraph_st> child)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    if (!s)
    {
        return false;
    }
    if (!s->capture->invalidated)
    {
        AddNode(*s, GraphNodeKind::Child)->child = std::move(child);
    }
    return true;
}

bool StreamCapture::CaptureEventNode(uint64_t stream, void* event, bool wait)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    if (!s)
    {
        return false;
    }
    if (!s->capture->invalidated)
    {
        AddNode(*s, wait ? GraphNodeKind::EventWait : GraphNodeKind::EventRecord)->event = event;
    }
    return true;
}

bool StreamCapture::AddReplayHook(uint64_t stream, std::function<void()> hook)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    if (!s)
    {
        return false;
    }
    s->capture->graph->replayHooks.push_back(std::move(hook));
    return true;
}

bool StreamCapture::RecordEvent(const void* event, uint64_t stream)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    if (!s)
    {
        m_events.erase(event);
        return false;
    }
    m_events[event] = EventState{s->capture, s->deps};
    return true;
}

StreamCapture::WaitOutcome StreamCapture::WaitEvent(uint64_t stream, const void* event)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    auto it = m_events.find(event);
    std::shared_ptr<Session> from;
    if (it != m_events.end())
    {
        from = it->second.capture.lock();
        if (!from || std::find(m_captures.begin(), m_captures.end(), from) == m_captures.end())
        {
            // Recorded in a capture that has ended: an event with nothing to wait for.
            m_events.erase(it);
            from = nullptr;
        }
    }
    if (!from)
    {
        return s ? WaitOutcome::Isolation : WaitOutcome::NotCaptured;
    }
    if (!s)
    {
        m_streams[stream] = StreamState{from, it->second.deps};
        return WaitOutcome::Captured;
    }
    if (s->capture != from)
    {
        return WaitOutcome::Isolation;
    }
    Merge(s->deps, it->second.deps);
    return WaitOutcome::Captured;
}

CaptureError StreamCapture::UpdateDependencies(uint64_t stream,
                                               const std::vector<CUgraphNode_st*>& nodes, bool set)
{
    std::lock_guard lock(m_mutex);
    StreamState* s = Find(stream);
    if (!s)
    {
        return CaptureError::NotCapturing;
    }
    for (const CUgraphNode_st* n : nodes)
    {
        if (!s->capture->graph->Owns(n))
        {
            return CaptureError::BadNode;
        }
    }
    if (set)
    {
        s->deps.clear();
    }
    Merge(s->deps, nodes);
    return CaptureError::None;
}

bool StreamCapture::Capturing(uint64_t stream)
{
    if (!AnyActive())
    {
        return false;
    }
    std::lock_guard lock(m_mutex);
    return Find(stream) != nullptr;
}

CaptureMode StreamCapture::ExchangeThreadMode(CaptureMode mode)
{
    return std::exchange(t_mode, mode);
}

bool StreamCapture::ForbidsUnsafeCall(const char*)
{
    if (!AnyActive() || t_mode == CaptureMode::Relaxed)
    {
        return false;
    }
    std::lock_guard lock(m_mutex);
    const std::thread::id self = std::this_thread::get_id();
    bool forbidden = false;
    for (auto& c : m_captures)
    {
        const bool own = c->thread == self && c->mode != CaptureMode::Relaxed;
        const bool other =
            t_mode == CaptureMode::Global && c->thread != self && c->mode == CaptureMode::Global;
        if (own || other)
        {
            c->invalidated = true;
            forbidden = true;
        }
    }
    return forbidden;
}

} // namespace phantora::interposer
