#include "op_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace phantora::profile
{

namespace
{
double Quantile(const std::vector<int64_t>& sorted, double q)
{
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return static_cast<double>(sorted[lo]) * (1.0 - frac) + static_cast<double>(sorted[hi]) * frac;
}
} // namespace

OpStats OpStats::FromSamples(std::vector<int64_t> d, std::string source)
{
    OpStats s;
    s.source = std::move(source);
    if (d.empty())
    {
        return s;
    }
    std::sort(d.begin(), d.end());
    s.samples = static_cast<int64_t>(d.size());
    s.medianNs = Quantile(d, 0.5);
    s.p10Ns = Quantile(d, 0.1);
    s.p90Ns = Quantile(d, 0.9);
    const double sum = std::accumulate(d.begin(), d.end(), 0.0);
    s.meanNs = sum / static_cast<double>(d.size());
    double sq = 0;
    for (int64_t v : d)
    {
        sq += (static_cast<double>(v) - s.meanNs) * (static_cast<double>(v) - s.meanNs);
    }
    s.stddevNs = std::sqrt(sq / static_cast<double>(d.size()));
    return s;
}

} // namespace phantora::profile
