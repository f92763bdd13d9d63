// How a graph's DAG is replayed on streams, worked out once at cudaGraphInstantiate: each
// node goes on a stream slot (slot 0: the stream the graph is launched on; the others:
// streams of the executable graph's own, as the real runtime runs a graph's parallel
// branches), following a dependency that is its slot's last node where it can, and the
// dependencies between slots become event records and waits, as a capture's fork and
// join were.  Every slot's work ends before the launch stream's later work starts (a
// graph launch is complete when all its nodes are), and branches that start the graph
// begin after the launch stream's earlier work.
#pragma once

#include "cuda_graph.h"

#include <cstdint>
#include <vector>

namespace phantora::interposer
{

struct ReplayStep
{
    enum class Kind
    {
        Node,   ///< the node's own work (nothing for an empty node)
        Record, ///< record slot \ref record's point on the slot
        Wait,   ///< the slot waits for record \ref record
    };
    Kind kind{Kind::Node};
    uint32_t slot{0};
    const CUgraphNode_st* node{nullptr}; ///< Node
    uint32_t record{0};                  ///< Record / Wait: which of the replay's records
};

struct ReplayPlan
{
    uint32_t slots{1};   ///< streams: the launch stream and slots - 1 of the graph's own
    uint32_t records{0}; ///< fresh event records each replay needs
    std::vector<ReplayStep> steps;
};

/// The plan of \p graph; throws std::invalid_argument if its edges make a cycle.
ReplayPlan PlanReplay(const CUgraph_st& graph);

} // namespace phantora::interposer
