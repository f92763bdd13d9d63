#include "bandwidth_curve.h"

#include <algorithm>
#include <cmath>

namespace phantora
{

void BandwidthCurve::Add(double bytes, double ns, const Entry* entry)
{
    if (bytes <= 0 || ns <= 0)
    {
        return;
    }
    m_points.push_back({bytes, ns, entry});
    m_sorted = false;
}

void BandwidthCurve::Sort() const
{
    if (!m_sorted)
    {
        std::stable_sort(m_points.begin(), m_points.end(),
                         [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
        m_sorted = true;
    }
}

std::optional<double> BandwidthCurve::TimeNs(double bytes, const Hidden& hidden) const
{
    Sort();
    auto visible = [&](std::size_t i)
    { return !hidden || !m_points[i].entry || !hidden(*m_points[i].entry); };
    // The nearest visible measurements in log size, walking out from where bytes falls.
    std::vector<const Point*> near;
    const auto at = std::lower_bound(m_points.begin(), m_points.end(), bytes,
                                     [](const Point& p, double b) { return p.bytes < b; });
    std::ptrdiff_t hi = at - m_points.begin();
    std::ptrdiff_t lo = hi - 1;
    const auto n = static_cast<std::ptrdiff_t>(m_points.size());
    while (near.size() < m_neighbours && (lo >= 0 || hi < n))
    {
        const double dLo = lo >= 0 ? std::log(bytes / m_points[lo].bytes) : INFINITY;
        const double dHi = hi < n ? std::log(m_points[hi].bytes / bytes) : INFINITY;
        const std::ptrdiff_t i = dLo <= dHi ? lo-- : hi++;
        if (visible(static_cast<std::size_t>(i)))
        {
            near.push_back(&m_points[static_cast<std::size_t>(i)]);
        }
    }
    if (near.empty())
    {
        return std::nullopt;
    }
    // t = latency + bytes / bandwidth, least squares in relative terms (each measurement
    // weighted by 1/t^2, so a 1 us copy counts as much as a 1 ms one).
    double sw = 0, sb = 0, st = 0, sbb = 0, sbt = 0;
    for (const Point* p : near)
    {
        const double w = 1.0 / (p->ns * p->ns);
        sw += w, sb += w * p->bytes, st += w * p->ns;
        sbb += w * p->bytes * p->bytes, sbt += w * p->bytes * p->ns;
    }
    const double det = sw * sbb - sb * sb;
    double latency = st / sw, perByte = 0;
    if (near.size() >= 2 && det > 0)
    {
        perByte = (sw * sbt - sb * st) / det;
        latency = (st - perByte * sb) / sw;
    }
    if (perByte < m_minNsPerByte)
    {
        // sizes where the time grows slower than the hardware allows (noise, or all
        // latency): the latency that leaves, at the hardware's rate
        perByte = m_minNsPerByte;
        latency = (st - perByte * sb) / sw;
    }
    if (latency < 0)
    {
        // no latency the measurements can resolve: bandwidth alone, through the origin
        latency = 0;
        perByte = std::max(sbt / sbb, m_minNsPerByte);
    }
    // Far past the measurements, and they were all latency: their slope is noise, and
    // the bytes beyond the largest go at the only rate known, the hardware's.
    double largest = 0;
    for (const Point* p : near)
    {
        largest = std::max(largest, p->bytes);
    }
    if (bytes > largest && m_minNsPerByte > 0 && perByte * largest < latency)
    {
        return latency + perByte * largest + m_minNsPerByte * (bytes - largest);
    }
    return latency + perByte * bytes;
}

} // namespace phantora
