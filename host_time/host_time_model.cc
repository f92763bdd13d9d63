#include "host_time_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace phantora::host_time
{

int64_t WeightedMedian(std::vector<HostTimeModel::Figure> figures)
{
    if (figures.empty())
    {
        return 0;
    }
    std::sort(figures.begin(), figures.end(),
              [](const auto& a, const auto& b)
              { return a.ns != b.ns ? a.ns < b.ns : a.weight < b.weight; });
    double total = 0;
    for (const auto& f : figures)
    {
        total += f.weight;
    }
    const double half = total / 2;
    double below = 0;
    for (std::size_t i = 0; i < figures.size(); ++i)
    {
        below += figures[i].weight;
        // Compared with a tolerance: the weights are ratios, and an exact half (two
        // programs of equal weight) must give the mean as a plain median does.
        if (std::abs(below - half) <= 1e-9 * total && i + 1 < figures.size())
        {
            return figures[i].ns + (figures[i + 1].ns - figures[i].ns) / 2;
        }
        if (below > half)
        {
            return figures[i].ns;
        }
    }
    return figures.back().ns;
}

void HostTimeModel::AddProgram(const GapSamples& samples, std::size_t runs)
{
    if (samples.Empty())
    {
        return;
    }
    if (runs == 0)
    {
        throw std::invalid_argument("host-time model: a program with samples but no runs");
    }
    const auto add = [&](const std::unordered_map<uint64_t, std::vector<int64_t>>& in,
                         std::unordered_map<uint64_t, std::vector<Figure>>& out)
    {
        for (const auto& [key, v] : in)
        {
            out[key].push_back({Reduce(v, m_options.statistic),
                                static_cast<double>(v.size()) / static_cast<double>(runs),
                                v.size()});
        }
    };
    add(samples.GapsByKey(), m_gaps);
    add(samples.CallsByKey(), m_calls);
    m_global.push_back({Reduce(samples.AllGaps(), m_options.statistic), 1.0, 1});
    ++m_programs;
}

GapTable HostTimeModel::Build() const
{
    if (m_global.empty())
    {
        return {};
    }
    const auto combine = [this](const std::unordered_map<uint64_t, std::vector<Figure>>& in)
    {
        std::unordered_map<uint64_t, int64_t> out;
        out.reserve(in.size());
        for (const auto& [key, figures] : in)
        {
            std::size_t samples = 0;
            for (const auto& f : figures)
            {
                samples += f.samples;
            }
            if (samples < m_options.minSamples || figures.size() < m_options.minPrograms)
            {
                continue;
            }
            if (m_options.weightByHits)
            {
                out.emplace(key, WeightedMedian(figures));
            }
            else
            {
                std::vector<int64_t> each;
                for (const auto& f : figures)
                {
                    each.push_back(f.ns);
                }
                out.emplace(key, Reduce(each, GapStatistic::Median));
            }
        }
        return out;
    };
    std::vector<int64_t> global;
    for (const auto& f : m_global)
    {
        global.push_back(f.ns);
    }
    return GapTable::FromFigures(combine(m_gaps), combine(m_calls),
                                 Reduce(global, GapStatistic::Median));
}

} // namespace phantora::host_time
