#include "graph_node_attribution.h"

#include <algorithm>

namespace phantora::recorder
{

void GraphNodeAttribution::NodeCreated(uint64_t node, Origin origin)
{
    if (origin.call == 0 && origin.launchArgs == 0)
    {
        // Instantiation may report its copies as created too, outside any op, before or
        // after their clone event: that must not undo the clone's origin.  Node ids are
        // never reused, so nothing stale is kept.
        return;
    }
    m_origin[node] = origin;
    if (origin.call != 0)
    {
        m_capturedCalls.insert(origin.call);
    }
}

void GraphNodeAttribution::NodeCloned(uint64_t clone, uint64_t original)
{
    auto it = m_origin.find(original);
    if (it == m_origin.end())
    {
        m_origin.erase(clone);
        return;
    }
    const Origin origin = it->second; // copied first: the insertion may rehash
    m_origin[clone] = origin;
}

GraphNodeAttribution::Origin GraphNodeAttribution::OriginOf(uint64_t node) const
{
    auto it = m_origin.find(node);
    return it == m_origin.end() ? Origin{} : it->second;
}

bool GraphNodeAttribution::Captured(uint64_t call) const
{
    return m_capturedCalls.count(call) != 0;
}

bool GraphNodeAttribution::AddReplayed(uint64_t node, uint32_t launch, uint64_t start, uint64_t end)
{
    const uint64_t call = OriginOf(node).call;
    if (call == 0)
    {
        return false;
    }
    Span& span = m_spans[{call, launch}];
    span.start = std::min(span.start, start);
    span.end = std::max(span.end, end);
    ++m_attributed;
    return true;
}

std::vector<GraphNodeAttribution::Sample> GraphNodeAttribution::Samples() const
{
    std::vector<Sample> samples;
    samples.reserve(m_spans.size());
    for (const auto& [key, span] : m_spans)
    {
        samples.push_back({key.first, span.end > span.start ? span.end - span.start : 0});
    }
    return samples;
}

} // namespace phantora::recorder
