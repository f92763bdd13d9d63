#include "interval_set.h"

#include <algorithm>

namespace phantora
{

void IntervalSet::Add(int64_t startNs, int64_t endNs)
{
    if (endNs <= startNs)
    {
        return;
    }
    m_spans.emplace_back(startNs, endNs);
    if (m_spans.size() >= m_nextMerge)
    {
        Merge();
        m_nextMerge = std::max<std::size_t>(1024, 2 * m_spans.size());
    }
}

void IntervalSet::Merge() const
{
    if (m_mergedPrefix == m_spans.size())
    {
        return;
    }
    std::sort(m_spans.begin(), m_spans.end());
    std::size_t out = 0;
    for (std::size_t i = 1; i < m_spans.size(); ++i)
    {
        if (m_spans[i].first <= m_spans[out].second)
        {
            m_spans[out].second = std::max(m_spans[out].second, m_spans[i].second);
        }
        else
        {
            m_spans[++out] = m_spans[i];
        }
    }
    m_spans.resize(m_spans.empty() ? 0 : out + 1);
    m_mergedPrefix = m_spans.size();
}

const std::vector<std::pair<int64_t, int64_t>>& IntervalSet::Merged() const
{
    Merge();
    return m_spans;
}

int64_t IntervalSet::TotalNs() const
{
    int64_t total = 0;
    for (const auto& [a, b] : Merged())
    {
        total += b - a;
    }
    return total;
}

int64_t IntervalSet::OverlapNs(const IntervalSet& other) const
{
    const auto& x = Merged();
    const auto& y = other.Merged();
    int64_t total = 0;
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < x.size() && j < y.size())
    {
        const int64_t lo = std::max(x[i].first, y[j].first);
        const int64_t hi = std::min(x[i].second, y[j].second);
        total += std::max<int64_t>(0, hi - lo);
        if (x[i].second < y[j].second)
        {
            ++i;
        }
        else
        {
            ++j;
        }
    }
    return total;
}

} // namespace phantora
