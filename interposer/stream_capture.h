// Stream capture (cudaStreamBeginCapture ... cudaStreamEndCapture): while a stream is
// captured, the work issued on it becomes nodes of a graph instead of reaching the
// bridge.  Each captured stream has a set of dependencies, the nodes its next work
// follows; an event recorded on a captured stream takes that set, and a stream that
// waits for such an event joins the capture with it (the fork/join pattern: PyTorch's
// side streams, NCCL's stream).  The capture ends on its origin stream, once every
// stream that joined has been joined back to it.
//
// The capture modes (cudaStreamCaptureModeGlobal, ThreadLocal, Relaxed) decide which
// threads may not make potentially unsafe calls (cudaMalloc, synchronisation, event
// queries) while a capture is under way: the capturing thread unless it began in relaxed
// mode, and, for a thread whose own mode (cudaThreadExchangeStreamCaptureMode) is global,
// any thread while another thread's global capture runs.  Such a call fails and
// invalidates the capture, as CUDA does.
//
// Stream ids are the wire's (protocol/streams.h).  One lock guards all captures.
#pragma once

#include "cuda_graph.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace phantora::interposer
{

/// cudaStreamCaptureMode's values.
enum class CaptureMode
{
    Global = 0,
    ThreadLocal = 1,
    Relaxed = 2,
};

/// cudaStreamCaptureStatus's values.
enum class CaptureStatus
{
    None = 0,
    Active = 1,
    Invalidated = 2,
};

enum class CaptureError
{
    None,
    NotCapturing,     ///< cudaErrorIllegalState (EndCapture of a stream not capturing)
    AlreadyCapturing, ///< cudaErrorIllegalState (BeginCapture of a captured stream)
    LegacyStream,     ///< cudaErrorStreamCaptureUnsupported (the legacy stream cannot be captured)
    NotOrigin,        ///< cudaErrorStreamCaptureUnmatched (ended on a stream that joined)
    WrongThread,      ///< cudaErrorStreamCaptureWrongThread (ended by another thread, not relaxed)
    Unjoined,         ///< cudaErrorStreamCaptureUnjoined (a forked stream never joined back)
    Invalidated,      ///< cudaErrorStreamCaptureInvalidated
    Isolation,        ///< cudaErrorStreamCaptureIsolation (waits across captures)
    BadNode,          ///< cudaErrorInvalidValue (a dependency not of the capture's graph)
};

class StreamCapture
{
public:
    static StreamCapture& Get();
    /// True while any capture is under way (a lock-free look before the real one).
    static bool AnyActive() { return s_active.load(std::memory_order_acquire) > 0; }

    CaptureError Begin(uint64_t stream, CaptureMode mode);

    struct Ended
    {
        CaptureError error{CaptureError::None};
        std::unique_ptr<CUgraph_st> graph;
    };
    /// Ends the capture \p stream began; its graph on success.  The capture ends either
    /// way (an invalidated or unjoined capture is discarded, as CUDA does).
    Ended End(uint64_t stream);

    struct Info
    {
        CaptureStatus status{CaptureStatus::None};
        uint64_t id{0};
        CUgraph_st* graph{nullptr};
        /// The stream's current dependencies; valid until the next capture call on it.
        const std::vector<CUgraphNode_st*>* deps{nullptr};
    };
    Info Query(uint64_t stream);

    /// If \p request's stream is captured: adds it as a node (true).  A stream whose
    /// capture was invalidated takes nothing and sends nothing either (true).
    bool Capture(const wire::Request& request);
    /// If \p stream is captured: adds a host node that runs \p fn at each replay (true).
    bool CaptureHost(uint64_t stream, std::function<void()> fn);
    /// If \p stream is captured: adds a child-graph node running \p child (true).
    bool CaptureChild(uint64_t stream, std::unique_ptr<CUgraph_st> child);
    /// If \p stream is captured: adds an external event record (\p wait false) or wait
    /// node for \p event (true).
    bool CaptureEventNode(uint64_t stream, void* event, bool wait);
    /// If \p stream is captured: \p hook runs at each replay of the capture's graph (true).
    bool AddReplayHook(uint64_t stream, std::function<void()> hook);
    /// cudaEventRecord of \p event on \p stream: true if the stream is captured (the event
    /// then stands for the stream's current dependencies, and no record reaches the
    /// bridge); false otherwise (the event's earlier capture, if any, is forgotten).
    bool RecordEvent(const void* event, uint64_t stream);

    enum class WaitOutcome
    {
        NotCaptured, ///< a wait to send to the bridge as usual
        Captured,  ///< the stream follows the event's dependencies (joined if it was not captured)
        Isolation, ///< a captured stream waits for an event recorded outside its capture
    };
    WaitOutcome WaitEvent(uint64_t stream, const void* event);

    /// cudaStreamUpdateCaptureDependencies: \p set replaces the stream's dependencies,
    /// else they are added to them.
    CaptureError UpdateDependencies(uint64_t stream, const std::vector<CUgraphNode_st*>& nodes,
                                    bool set);

    bool Capturing(uint64_t stream);

    /// cudaThreadExchangeStreamCaptureMode: the calling thread's mode, replaced by \p mode.
    static CaptureMode ExchangeThreadMode(CaptureMode mode);

    /// The calling thread is about to make the potentially unsafe call \p call: if a
    /// capture forbids it (see the top of this file), that capture is invalidated and the
    /// answer is true (the call must fail with cudaErrorStreamCaptureUnsupported).
    bool ForbidsUnsafeCall(const char* call);

private:
    struct Session
    {
        uint64_t id{0};
        std::unique_ptr<CUgraph_st> graph;
        CaptureMode mode{CaptureMode::Global};
        std::thread::id thread;
        uint64_t origin{0};
        bool invalidated{false};
    };
    struct StreamState
    {
        std::shared_ptr<Session> capture;
        std::vector<CUgraphNode_st*> deps;
    };
    struct EventState
    {
        std::weak_ptr<Session> capture;
        std::vector<CUgraphNode_st*> deps;
    };

    /// The state of \p stream if it is captured (m_mutex held), else nullptr.
    StreamState* Find(uint64_t stream);
    /// A node of \p kind after \p s's dependencies, which it becomes (m_mutex held).
    CUgraphNode_st* AddNode(StreamState& s, GraphNodeKind kind);

    std::mutex m_mutex;
    std::map<uint64_t, StreamState> m_streams;
    std::map<const void*, EventState> m_events;
    std::vector<std::shared_ptr<Session>> m_captures; ///< under way
    uint64_t m_nextId{1};
    static std::atomic<int> s_active;
};

} // namespace phantora::interposer
