#include "attention_work.h"

#include <cmath>
#include <limits>

namespace phantora
{

using profile::CudnnOpClass;
using profile::CudnnSignature;

std::optional<AttentionWork> AttentionWork::Of(const CudnnSignature& s)
{
    if (s.Class() != CudnnOpClass::Attention)
        return std::nullopt;
    const auto b = s.Int("b"), h = s.Int("h"), sq = s.Int("s_q"), skv = s.Int("s_kv");
    if (!b || !h || !sq || !skv || !s.Int("d_qk") || !s.Int("d_v"))
        return std::nullopt;
    AttentionWork w;
    w.backward = s.api == "cudnnSdpaBprop";
    w.flops = s.Flops();
    w.scores = static_cast<double>(*b) * static_cast<double>(*h) * static_cast<double>(*sq) *
               static_cast<double>(*skv) * (s.Int("causal").value_or(0) ? 0.5 : 1.0);
    w.dropout = s.Int("dropout").value_or(0) != 0;
    const std::string type = s.Type();
    w.typeGroup = type == "bf16" || type == "f16" ? "half" : type;
    return w;
}

namespace
{
constexpr std::size_t kTerms = 4;

std::array<double, kTerms> Columns(const AttentionWork& w)
{
    return {1.0, w.flops, w.scores, w.dropout ? w.scores : 0.0};
}

/// Least squares over the columns in \p use (a bit mask) of rows scaled by 1/t, solved by
/// the normal equations (Gaussian elimination, partial pivoting): nullopt when singular.
std::optional<std::array<double, kTerms>>
Solve(const std::vector<AttentionTimeModel::Point>& points, unsigned use)
{
    std::vector<std::size_t> cols;
    for (std::size_t j = 0; j < kTerms; ++j)
        if (use & (1u << j))
            cols.push_back(j);
    const std::size_t n = cols.size();
    // Columns in units that keep the normal matrix well conditioned: each by its mean.
    std::array<double, kTerms> unit{};
    for (const auto& p : points)
    {
        const auto x = Columns(p.work);
        for (std::size_t j = 0; j < kTerms; ++j)
            unit[j] += x[j] / p.ns / static_cast<double>(points.size());
    }
    std::vector<std::vector<double>> a(n, std::vector<double>(n + 1, 0.0));
    for (const auto& p : points)
    {
        const auto x = Columns(p.work);
        for (std::size_t r = 0; r < n; ++r)
        {
            const double xr = x[cols[r]] / p.ns / unit[cols[r]];
            for (std::size_t c = 0; c < n; ++c)
                a[r][c] += xr * x[cols[c]] / p.ns / unit[cols[c]];
            a[r][n] += xr; // the target: 1 (t / t)
        }
    }
    for (std::size_t c = 0; c < n; ++c)
    {
        std::size_t pivot = c;
        for (std::size_t r = c + 1; r < n; ++r)
            if (std::abs(a[r][c]) > std::abs(a[pivot][c]))
                pivot = r;
        if (std::abs(a[pivot][c]) < 1e-9)
            return std::nullopt;
        std::swap(a[c], a[pivot]);
        for (std::size_t r = 0; r < n; ++r)
        {
            if (r == c)
                continue;
            const double f = a[r][c] / a[c][c];
            for (std::size_t k = c; k <= n; ++k)
                a[r][k] -= f * a[c][k];
        }
    }
    std::array<double, kTerms> terms{};
    for (std::size_t r = 0; r < n; ++r)
        terms[cols[r]] = a[r][n] / a[r][r] / unit[cols[r]];
    return terms;
}
} // namespace

// Non-negative least squares by trying every subset of the terms (there are four): the
// subset whose unconstrained solution is non-negative and leaves the least relative
// residual.  A term the measurements cannot tell (no dropout call measured) is left out.
std::optional<AttentionTimeModel> AttentionTimeModel::Fit(const std::vector<Point>& points)
{
    constexpr std::size_t kMinPoints = 3;
    if (points.size() < kMinPoints)
        return std::nullopt;
    unsigned present = 0;
    for (const auto& p : points)
    {
        if (p.ns <= 0)
            return std::nullopt;
        const auto x = Columns(p.work);
        for (std::size_t j = 0; j < kTerms; ++j)
            if (x[j] > 0)
                present |= 1u << j;
    }
    std::optional<AttentionTimeModel> best;
    double bestResidual = std::numeric_limits<double>::infinity();
    for (unsigned use = 1; use < (1u << kTerms); ++use)
    {
        // the work must be in it (a fixed cost alone is no model of attention), and only
        // terms some measurement has, no more of them than measurements
        if ((use & present) != use || (use & 0b0110u) == 0 ||
            static_cast<std::size_t>(__builtin_popcount(use)) > points.size())
            continue;
        const auto terms = Solve(points, use);
        if (!terms)
            continue;
        bool negative = false;
        for (double t : *terms)
            negative = negative || t < 0;
        if (negative)
            continue;
        AttentionTimeModel m;
        m.m_terms = *terms;
        double residual = 0;
        for (const auto& p : points)
            residual += std::pow(m.TimeNs(p.work) / p.ns - 1.0, 2);
        if (residual < bestResidual - 1e-12)
        {
            bestResidual = residual;
            best = m;
        }
    }
    return best;
}

double AttentionTimeModel::TimeNs(const AttentionWork& w) const
{
    const auto x = Columns(w);
    double ns = 0;
    for (std::size_t j = 0; j < kTerms; ++j)
        ns += m_terms[j] * x[j];
    return ns;
}

} // namespace phantora
