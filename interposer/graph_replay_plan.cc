#include "graph_replay_plan.h"

#include <map>
#include <stdexcept>

namespace phantora::interposer
{

ReplayPlan PlanReplay(const CUgraph_st& graph)
{
    const std::vector<const CUgraphNode_st*> order = graph.TopologicalOrder();
    if (order.size() != graph.nodes.size())
    {
        throw std::invalid_argument("the graph's dependencies make a cycle");
    }
    ReplayPlan plan;
    if (order.empty())
    {
        return plan;
    }
    // Slots: a node follows one of its dependencies where that one is still its slot's
    // last node (the lowest such slot, for a plan that does not depend on addresses).
    std::map<const CUgraphNode_st*, uint32_t> slotOf;
    std::vector<const CUgraphNode_st*> tail{nullptr};
    bool rootOnOther = false;
    for (const CUgraphNode_st* n : order)
    {
        uint32_t chosen = UINT32_MAX;
        for (const CUgraphNode_st* d : n->deps)
        {
            const uint32_t s = slotOf.at(d);
            if (tail[s] == d && s < chosen)
            {
                chosen = s;
            }
        }
        if (chosen == UINT32_MAX && n->deps.empty() && tail[0] == nullptr)
        {
            chosen = 0;
        }
        if (chosen == UINT32_MAX)
        {
            chosen = static_cast<uint32_t>(tail.size());
            tail.push_back(nullptr);
            rootOnOther = rootOnOther || n->deps.empty();
        }
        slotOf[n] = chosen;
        tail[chosen] = n;
    }
    plan.slots = static_cast<uint32_t>(tail.size());
    // Records: after each node another slot depends on, and after each other slot's last
    // node (the launch stream joins them all).
    std::map<const CUgraphNode_st*, uint32_t> recordOf;
    auto needRecord = [&](const CUgraphNode_st* n)
    {
        if (!recordOf.count(n))
        {
            recordOf[n] = plan.records++;
        }
    };
    uint32_t start = 0;
    if (rootOnOther)
    {
        start = plan.records++;
        plan.steps.push_back({ReplayStep::Kind::Record, 0, nullptr, start});
    }
    for (const CUgraphNode_st* n : order)
    {
        for (const CUgraphNode_st* d : n->deps)
        {
            if (slotOf.at(d) != slotOf.at(n))
            {
                needRecord(d);
            }
        }
    }
    for (uint32_t s = 1; s < plan.slots; ++s)
    {
        needRecord(tail[s]);
    }
    for (const CUgraphNode_st* n : order)
    {
        const uint32_t slot = slotOf.at(n);
        if (n->deps.empty() && slot != 0)
        {
            plan.steps.push_back({ReplayStep::Kind::Wait, slot, nullptr, start});
        }
        for (const CUgraphNode_st* d : n->deps)
        {
            if (slotOf.at(d) != slot)
            {
                plan.steps.push_back({ReplayStep::Kind::Wait, slot, nullptr, recordOf.at(d)});
            }
        }
        plan.steps.push_back({ReplayStep::Kind::Node, slot, n, 0});
        if (auto it = recordOf.find(n); it != recordOf.end())
        {
            plan.steps.push_back({ReplayStep::Kind::Record, slot, nullptr, it->second});
        }
    }
    for (uint32_t s = 1; s < plan.slots; ++s)
    {
        plan.steps.push_back({ReplayStep::Kind::Wait, 0, nullptr, recordOf.at(tail[s])});
    }
    return plan;
}

} // namespace phantora::interposer
