// Which recorded op a CUDA graph's replayed GPU activity belongs to.  On a real GPU CUPTI
// files a replayed kernel under the cudaGraphLaunch, not under the cuBLAS / cuDNN call
// (or the tagged launch) that was captured into its node, so without this the recorder
// would store a captured GEMM's replays as plain kernels and keep only the GEMM's eager
// warm-up calls under its key.  CUPTI reports each node's creation (during stream capture:
// on the capturing thread, inside the library call's scope, recorder_call_scope.h), each
// clone (cudaGraphInstantiate copies the nodes; replayed activities name the copies), and
// each activity's node id; this class joins them.  It knows nothing of CUPTI, so the
// attribution is tested without a GPU (tests/unit/graph_node_attribution_test.cc).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace phantora::recorder
{

class GraphNodeAttribution
{
public:
    /// What was being recorded on the thread that created a node: a library call's id
    /// (0: none) and a kernel launch's argument-facts id (0: none).
    struct Origin
    {
        uint64_t call{0};
        uint64_t launchArgs{0};
    };

    /// A node was created (stream capture or the explicit graph API).  A node created
    /// outside any library call and launch tag changes nothing: its replays stay plain, and
    /// a copy that instantiation also reports as created keeps what its clone event gave.
    void NodeCreated(uint64_t node, Origin origin);
    /// \p clone was copied from \p original (instantiation, cudaGraphClone): it takes over
    /// the original's origin, also through chains of copies.
    void NodeCloned(uint64_t clone, uint64_t original);
    /// The origin of a node, {0, 0} for one never seen or created outside any op.
    Origin OriginOf(uint64_t node) const;
    /// Whether nodes were created inside library call \p call: then it was captured, and
    /// the GPU activities it ran eagerly at capture time (none should exist: a captured
    /// launch does no GPU work) are no sample of it.
    bool Captured(uint64_t call) const;

    /// One GPU activity of a graph replay: node \p node, launched by the cudaGraphLaunch
    /// whose CUPTI correlation id is \p launch.  Returns false, keeping nothing, when the
    /// node belongs to no library call (the caller records the activity on its own).
    bool AddReplayed(uint64_t node, uint32_t launch, uint64_t start, uint64_t end);

    /// One sample per library call and replay: the span from the first start to the last
    /// end of that call's nodes within one graph launch, as an eager call's span.
    struct Sample
    {
        uint64_t call;
        uint64_t ns;
    };
    std::vector<Sample> Samples() const;
    /// GPU activities given to library calls by AddReplayed.
    uint64_t AttributedActivities() const { return m_attributed; }

private:
    std::unordered_map<uint64_t, Origin> m_origin; ///< node id -> what created it
    std::set<uint64_t> m_capturedCalls;
    struct Span
    {
        uint64_t start{~0ull}, end{0};
    };
    std::map<std::pair<uint64_t, uint32_t>, Span> m_spans; ///< (call, launch) -> span
    uint64_t m_attributed{0};
};

} // namespace phantora::recorder
