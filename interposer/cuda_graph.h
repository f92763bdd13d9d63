// A CUDA graph as the interposer keeps it: a DAG of nodes, each the request the node
// would have sent the bridge had it been issued on a stream (a kernel launch, a copy or
// memset, a collective), a host function, an event record or wait, or nothing (an empty
// node).  Built by stream capture (stream_capture.h) or the explicit API
// (cuda_graph_hooks.cc); replayed by sending those requests again (graph_replay_plan.h).
//
// The handle types are CUDA's own (cudaGraph_t is CUgraph_st*, cudaGraphNode_t is
// CUgraphNode_st*), defined here without the toolkit's headers so that the state can be
// unit-tested.  A node's address is its handle; it lives as long as its graph.
#pragma once

#include "protocol/messages.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace phantora::interposer
{

enum class GraphNodeKind
{
    Op,          ///< a request on a stream (kernel, copy, memset, collective, send/receive)
    Host,        ///< cudaLaunchHostFunc / cudaGraphAddHostNode
    Empty,       ///< cudaGraphAddEmptyNode: dependencies only
    EventRecord, ///< an external event record (cudaEventRecordExternal,
                 ///< cudaGraphAddEventRecordNode)
    EventWait,   ///< an external event wait (cudaEventWaitExternal, cudaGraphAddEventWaitNode)
    Child,       ///< a graph run as one node (cudaGraphAddChildGraphNode, a graph launched
                 ///< into a captured stream): inlined at instantiation (FlattenChildren)
};

} // namespace phantora::interposer

struct CUgraph_st;

struct CUgraphNode_st
{
    phantora::interposer::GraphNodeKind kind{phantora::interposer::GraphNodeKind::Empty};
    CUgraph_st* graph{nullptr};
    /// Op: its request; the stream it names is where it was captured, and is replaced at
    /// each replay by the stream the replay puts it on.
    phantora::wire::Request op;
    /// Host: the function, as the program gave it.
    std::function<void()> host;
    /// EventRecord / EventWait: the program's cudaEvent_t.
    void* event{nullptr};
    /// Child: the node's own copy of the graph it runs.
    std::unique_ptr<CUgraph_st> child;
    std::vector<CUgraphNode_st*> deps;
    std::vector<CUgraphNode_st*> dependents;
};

struct CUgraph_st
{
    std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
    /// Run once per replay, before its requests are sent: the interposer's own counters of
    /// what the bridge numbers (a communicator's collectives, receives from a peer), which
    /// the capture did not advance because nothing reached the bridge then.
    std::vector<std::function<void()>> replayHooks;

    /// A new node of \p kind after \p deps (nodes of this graph).
    CUgraphNode_st* Add(phantora::interposer::GraphNodeKind kind,
                        const std::vector<CUgraphNode_st*>& deps);
    /// Whether \p node is one of this graph's.
    bool Owns(const CUgraphNode_st* node) const;
    /// A copy whose nodes are new objects with the same content and edges.
    std::unique_ptr<CUgraph_st> Clone() const;
    /// The nodes in an order where every node comes after its dependencies (ties: the
    /// order they were added); empty if the edges make a cycle.
    std::vector<const CUgraphNode_st*> TopologicalOrder() const;
    /// The nodes no other node depends on.
    std::vector<CUgraphNode_st*> Leaves() const;
    /// Replaces each child-graph node, at any depth, by the child's nodes: they start after
    /// the node's dependencies (through an empty node), and the node, now empty, after
    /// the child's leaves, so what depended on it still waits for the whole child.  The
    /// child's replay hooks become this graph's.
    void FlattenChildren();
};

namespace phantora::interposer
{

/// Adds the edge \p from -> \p to (both of one graph); false if it is there already.
bool AddEdge(CUgraphNode_st* from, CUgraphNode_st* to);
/// Removes the edge; false if there was none.
bool RemoveEdge(CUgraphNode_st* from, CUgraphNode_st* to);
/// The stream a request is issued on, or nullptr for requests not on a stream.
uint64_t* StreamOf(wire::Request& request);

} // namespace phantora::interposer
