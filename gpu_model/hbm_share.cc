#include "hbm_share.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace phantora
{

namespace
{
/// Work remembered: at least this many spans, and every span that ended less than
/// kForgetAfterNs before the latest one started.  A collective's share is asked for once
/// its network end is final, when the program's host may have placed thousands of
/// kernels past it; forgetting by count alone would make the answer depend on how many.
constexpr std::size_t kRemembered = 8192;
constexpr int64_t kForgetAfterNs = 50'000'000;
} // namespace

void HbmShare::Add(int64_t startNs, int64_t endNs)
{
    if (endNs <= startNs)
    {
        return;
    }
    m_spans.emplace_back(startNs, endNs);
    while (m_spans.size() > kRemembered && m_spans.front().second + kForgetAfterNs < startNs)
    {
        m_spans.pop_front();
    }
}

double HbmShare::Share(int64_t fromNs, int64_t toNs) const
{
    if (toNs <= fromNs)
    {
        return 0.0;
    }
    std::vector<std::pair<int64_t, int64_t>> inside;
    for (const auto& [start, end] : m_spans)
    {
        if (start < toNs && end > fromNs)
        {
            inside.emplace_back(std::max(start, fromNs), std::min(end, toNs));
        }
    }
    std::sort(inside.begin(), inside.end());
    int64_t covered = 0;
    int64_t reached = fromNs;
    for (const auto& [start, end] : inside)
    {
        covered += std::max<int64_t>(0, end - std::max(start, reached));
        reached = std::max(reached, end);
    }
    return static_cast<double>(covered) / static_cast<double>(toNs - fromNs);
}

double HbmShare::Rate(double share, double rateBeside)
{
    const double s = std::clamp(share, 0.0, 1.0);
    const double r = std::clamp(rateBeside, 0.0, 1.0);
    return std::max(1.0 - s * (1.0 - r), 1e-3);
}

int64_t HbmShare::EndAt(int64_t startNs, int64_t aloneEndNs, double rate)
{
    if (aloneEndNs <= startNs || rate >= 1.0)
    {
        return aloneEndNs;
    }
    return startNs + std::llround(static_cast<double>(aloneEndNs - startNs) / rate);
}

} // namespace phantora
