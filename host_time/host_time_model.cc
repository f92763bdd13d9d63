#include "host_time_model.h"

namespace phantora::host_time
{

void HostTimeModel::AddProgram(const GapSamples& samples)
{
    if (samples.Empty())
    {
        return;
    }
    const GapTable own = samples.Reduce(m_statistic);
    for (const auto& [key, ns] : own.GapFigures())
    {
        m_gaps[key].push_back(ns);
    }
    for (const auto& [key, ns] : own.CallFigures())
    {
        m_calls[key].push_back(ns);
    }
    m_global.push_back(*own.GlobalFigure());
    ++m_programs;
}

GapTable HostTimeModel::Build() const
{
    if (m_global.empty())
    {
        return {};
    }
    // Across programs always the median: one program's odd figure (a framework's own
    // path at a shared call site) should not move the others'.
    const auto combine = [](const std::unordered_map<uint64_t, std::vector<int64_t>>& in)
    {
        std::unordered_map<uint64_t, int64_t> out;
        out.reserve(in.size());
        for (const auto& [key, figures] : in)
        {
            out.emplace(key, Reduce(figures, GapStatistic::Median));
        }
        return out;
    };
    return GapTable::FromFigures(combine(m_gaps), combine(m_calls),
                                 Reduce(m_global, GapStatistic::Median));
}

} // namespace phantora::host_time
