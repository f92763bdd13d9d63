#include "cuda_graph.h"

#include <algorithm>
#include <map>
#include <queue>

using phantora::interposer::GraphNodeKind;

CUgraphNode_st* CUgraph_st::Add(GraphNodeKind kind, const std::vector<CUgraphNode_st*>& deps)
{
    auto node = std::make_unique<CUgraphNode_st>();
    node->kind = kind;
    node->graph = this;
    CUgraphNode_st* n = node.get();
    nodes.push_back(std::move(node));
    for (CUgraphNode_st* d : deps)
    {
        phantora::interposer::AddEdge(d, n);
    }
    return n;
}

bool CUgraph_st::Owns(const CUgraphNode_st* node) const
{
    return node && node->graph == this &&
           std::any_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.get() == node; });
}

std::unique_ptr<CUgraph_st> CUgraph_st::Clone() const
{
    auto copy = std::make_unique<CUgraph_st>();
    std::map<const CUgraphNode_st*, CUgraphNode_st*> mapped;
    for (const auto& n : nodes)
    {
        auto c = std::make_unique<CUgraphNode_st>();
        c->kind = n->kind;
        c->graph = copy.get();
        c->op = n->op;
        c->host = n->host;
        c->event = n->event;
        c->child = n->child ? n->child->Clone() : nullptr;
        mapped[n.get()] = c.get();
        copy->nodes.push_back(std::move(c));
    }
    for (const auto& n : nodes)
    {
        CUgraphNode_st* c = mapped.at(n.get());
        for (CUgraphNode_st* d : n->deps)
        {
            c->deps.push_back(mapped.at(d));
        }
        for (CUgraphNode_st* d : n->dependents)
        {
            c->dependents.push_back(mapped.at(d));
        }
    }
    copy->replayHooks = replayHooks;
    return copy;
}

void CUgraph_st::FlattenChildren()
{
    using phantora::interposer::GraphNodeKind;
    // By index: inlining appends to nodes, and an inlined grandchild is met again later.
    for (std::size_t i = 0; i < nodes.size(); ++i)
    {
        CUgraphNode_st* node = nodes[i].get();
        if (node->kind != GraphNodeKind::Child)
        {
            continue;
        }
        std::unique_ptr<CUgraph_st> child = std::move(node->child);
        node->kind = GraphNodeKind::Empty;
        if (!child || child->nodes.empty())
        {
            continue;
        }
        const std::vector<CUgraphNode_st*> leaves = child->Leaves();
        CUgraphNode_st* entry = Add(GraphNodeKind::Empty, node->deps);
        for (CUgraphNode_st* d : std::vector<CUgraphNode_st*>(node->deps))
        {
            phantora::interposer::RemoveEdge(d, node);
        }
        for (auto& c : child->nodes)
        {
            c->graph = this;
            if (c->deps.empty())
            {
                phantora::interposer::AddEdge(entry, c.get());
            }
            nodes.push_back(std::move(c));
        }
        for (CUgraphNode_st* leaf : leaves)
        {
            phantora::interposer::AddEdge(leaf, node);
        }
        replayHooks.insert(replayHooks.end(), child->replayHooks.begin(), child->replayHooks.end());
    }
}

std::vector<const CUgraphNode_st*> CUgraph_st::TopologicalOrder() const
{
    std::map<const CUgraphNode_st*, std::size_t> index;
    for (std::size_t i = 0; i < nodes.size(); ++i)
    {
        index[nodes[i].get()] = i;
    }
    std::vector<std::size_t> missing(nodes.size());
    // Smallest index first among the ready: the order they were added where edges allow.
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < nodes.size(); ++i)
    {
        missing[i] = nodes[i]->deps.size();
        if (missing[i] == 0)
        {
            ready.push(i);
        }
    }
    std::vector<const CUgraphNode_st*> order;
    while (!ready.empty())
    {
        const std::size_t i = ready.top();
        ready.pop();
        order.push_back(nodes[i].get());
        for (const CUgraphNode_st* d : nodes[i]->dependents)
        {
            const std::size_t j = index.at(d);
            if (--missing[j] == 0)
            {
                ready.push(j);
            }
        }
    }
    if (order.size() != nodes.size())
    {
        order.clear();
    }
    return order;
}

std::vector<CUgraphNode_st*> CUgraph_st::Leaves() const
{
    std::vector<CUgraphNode_st*> leaves;
    for (const auto& n : nodes)
    {
        if (n->dependents.empty())
        {
            leaves.push_back(n.get());
        }
    }
    return leaves;
}

namespace phantora::interposer
{

bool AddEdge(CUgraphNode_st* from, CUgraphNode_st* to)
{
    if (std::find(to->deps.begin(), to->deps.end(), from) != to->deps.end())
    {
        return false;
    }
    to->deps.push_back(from);
    from->dependents.push_back(to);
    return true;
}

bool RemoveEdge(CUgraphNode_st* from, CUgraphNode_st* to)
{
    auto it = std::find(to->deps.begin(), to->deps.end(), from);
    if (it == to->deps.end())
    {
        return false;
    }
    to->deps.erase(it);
    auto& out = from->dependents;
    out.erase(std::find(out.begin(), out.end(), to));
    return true;
}

uint64_t* StreamOf(wire::Request& request)
{
    if (auto* k = std::get_if<wire::KernelLaunch>(&request))
    {
        return &k->stream;
    }
    if (auto* m = std::get_if<wire::Memcpy>(&request))
    {
        return &m->stream;
    }
    if (auto* c = std::get_if<wire::NcclCollective>(&request))
    {
        return &c->stream;
    }
    if (auto* p = std::get_if<wire::NcclP2P>(&request))
    {
        return &p->stream;
    }
    if (auto* r = std::get_if<wire::EventRecord>(&request))
    {
        return &r->stream;
    }
    if (auto* w = std::get_if<wire::StreamWaitEvent>(&request))
    {
        return &w->stream;
    }
    if (auto* h = std::get_if<wire::HostFunction>(&request))
    {
        return &h->stream;
    }
    if (auto* s = std::get_if<wire::Synchronize>(&request))
    {
        return s->wholeDevice ? nullptr : &s->stream;
    }
    return nullptr;
}

} // namespace phantora::interposer
