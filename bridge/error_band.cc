#include "error_band.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace phantora
{

ErrorBandTable ErrorBandTable::Read(const std::filesystem::path& file)
{
    std::ifstream in(file);
    if (!in)
    {
        throw std::runtime_error(fmt::format("cannot read the error bands {}", file.string()));
    }
    ErrorBandTable t;
    t.m_file = file;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
    {
        if (line.empty() || line[0] == '#' || line.rfind("gpu\t", 0) == 0)
        {
            continue; // comments and the header
        }
        std::istringstream row(line);
        std::string gpu, part, cls, count, pct;
        if (!std::getline(row, gpu, '\t') || !std::getline(row, part, '\t') ||
            !std::getline(row, cls, '\t') || !std::getline(row, count, '\t') ||
            !std::getline(row, pct, '\t'))
        {
            throw std::runtime_error(fmt::format(
                "{}:{}: expected gpu, part, class, count and mean_abs_error_pct separated by tabs",
                file.string(), n));
        }
        if (part != "gpu" && part != "host")
        {
            throw std::runtime_error(fmt::format("{}:{}: part '{}': expected \"gpu\" or \"host\"",
                                                 file.string(), n, part));
        }
        double value = 0;
        try
        {
            std::size_t used = 0;
            value = std::stod(pct, &used);
            if (used != pct.size() || value < 0)
            {
                throw std::invalid_argument(pct);
            }
        }
        catch (const std::exception&)
        {
            throw std::runtime_error(fmt::format(
                "{}:{}: mean_abs_error_pct '{}': expected a number of percent, 0 or more",
                file.string(), n, pct));
        }
        t.m_errors[{gpu, part, cls}] = value / 100.0;
    }
    return t;
}

std::optional<double> ErrorBandTable::Error(const std::string& gpu, const std::string& part,
                                            const std::string& cls) const
{
    auto it = m_errors.find({gpu, part, cls});
    if (it == m_errors.end())
    {
        return std::nullopt;
    }
    return it->second;
}

ErrorBand ComputeErrorBand(const KernelCostTable& kernels, const std::string& gpu,
                           const HostTimeProfile& host, const HostTimeProfile::Charged& charged,
                           const ErrorBandTable& table)
{
    struct Weighed
    {
        std::string part, cls;
        double ns;
    };
    std::vector<Weighed> weighed;
    const auto& by = kernels.BySource();
    for (std::size_t i = 0; i < by.size(); ++i)
    {
        if (by[i].ns > 0)
        {
            weighed.push_back(
                {"gpu", CostSourceName(static_cast<CostSource>(i)), static_cast<double>(by[i].ns)});
        }
    }
    constexpr auto kMeasured = static_cast<std::size_t>(host_time::Source::Measured);
    double tableNs = 0;
    for (std::size_t i = 0; i < kMeasured; ++i)
    {
        tableNs += static_cast<double>(charged.ns[i]);
    }
    if (host.origin == HostTimeOrigin::Measured)
    {
        tableNs += static_cast<double>(charged.ns[kMeasured]);
    }
    if (tableNs > 0)
    {
        const char* cls = host.origin == HostTimeOrigin::Recording ? "recording"
                          : host.origin == HostTimeOrigin::Model   ? "model"
                                                                   : "measured";
        weighed.push_back({"host", cls, tableNs});
    }
    double all = 0;
    for (const auto& w : weighed)
    {
        all += w.ns;
    }
    ErrorBand band;
    for (const auto& w : weighed)
    {
        ErrorBand::Part p;
        p.part = w.part;
        p.cls = w.cls;
        p.share = w.ns / all;
        // Durations the scenario gave are what the user asked for: no error of ours.
        const auto e = w.cls == "table" ? std::optional(0.0) : table.Error(gpu, w.part, w.cls);
        p.measured = e.has_value();
        p.error = e.value_or(kUnmeasuredError);
        band.parts.push_back(p);
    }
    // Each part's error is its sources' errors weighted by the time each priced in it; the
    // band is the larger part's.  A step is mostly the GPU's or the host's, whichever it
    // waits for (they overlap): then the step is as uncertain as the part that bounds it,
    // which a weighting by both parts' time would halve.
    std::map<std::string, std::pair<double, double>> parts; // part -> (share, share x error)
    for (const auto& p : band.parts)
    {
        parts[p.part].first += p.share;
        parts[p.part].second += p.share * p.error;
    }
    for (const auto& [part, t] : parts)
    {
        band.relative = std::max(band.relative, t.first > 0 ? t.second / t.first : 0.0);
    }
    return band;
}

std::string ErrorBand::Describe() const
{
    if (parts.empty())
    {
        return "error band: none (nothing was priced)";
    }
    double gpuShare = 0, hostShare = 0;
    for (const Part& p : parts)
    {
        (p.part == "gpu" ? gpuShare : hostShare) += p.share;
    }
    // Within a part, each source's share of that part: "GPU time 64%: 90% measured ±3%".
    std::string gpuParts, hostParts;
    for (const Part& p : parts)
    {
        std::string& out = p.part == "gpu" ? gpuParts : hostParts;
        const double of = p.part == "gpu" ? gpuShare : hostShare;
        out += fmt::format("{}{:.0f}% {} ±{:.0f}%{}", out.empty() ? "" : ", ", 100.0 * p.share / of,
                           p.cls, 100.0 * p.error, p.measured ? "" : " (not measured)");
    }
    std::string line = fmt::format("error band: ±{:.1f}% of each simulated time (", 100.0 * relative);
    if (!gpuParts.empty())
    {
        line += fmt::format("GPU time {:.0f}%: {}", 100.0 * gpuShare, gpuParts);
    }
    if (!hostParts.empty())
    {
        line += fmt::format("{}host time {:.0f}%: {}", gpuParts.empty() ? "" : "; ",
                            100.0 * hostShare, hostParts);
    }
    return line + ")";
}

} // namespace phantora
