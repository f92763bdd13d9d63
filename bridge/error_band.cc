#include "error_band.h"

#include "gpu_model/op_class.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <map>
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
    // A predicted GPU's times are the profile's GPU's, scaled: that GPU's errors apply.
    const std::string measuredOn =
        kernels.Prediction() ? kernels.Prediction()->Source().model : gpu;
    // GPU time by what priced it: the profile's measurements, the scenario's table, the
    // default, and the estimates by op class (each class's estimates were measured
    // against programs the profile did not hold: bench/error_bands.py).
    // Measured ops apart by whose samples priced them: the program's own (a recorded run)
    // or only other programs' (a run the profile never recorded takes all of them so, and
    // the same op runs a little differently beside another program's ops).
    const auto& by = kernels.BySource();
    for (const CostSource s : {CostSource::Measured, CostSource::Table, CostSource::Default})
    {
        auto ns = by[static_cast<std::size_t>(s)].ns;
        const auto elsewhere =
            s == CostSource::Measured ? std::min(kernels.MeasuredElsewhereNs(), ns) : int64_t{0};
        ns -= elsewhere;
        if (ns > 0)
            weighed.push_back({"gpu", CostSourceName(s), static_cast<double>(ns)});
        if (elsewhere > 0)
            weighed.push_back({"gpu", "measured_other", static_cast<double>(elsewhere)});
    }
    std::map<OpClass, double> estimated;
    for (const auto& miss : kernels.Misses())
    {
        if (miss.source != CostSource::Default && miss.ns > 0)
            estimated[ClassOf(miss.key)] += static_cast<double>(miss.ns);
    }
    for (const auto& [cls, ns] : estimated)
        weighed.push_back({"gpu", OpClassName(cls), ns});
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
        auto e = w.cls == "table" ? std::optional(0.0) : table.Error(measuredOn, w.part, w.cls);
        if (!e && w.cls == "measured_other")
            e = table.Error(measuredOn, w.part, "measured"); // a table written before the split
        p.measured = e.has_value();
        p.error = e.value_or(kUnmeasuredError);
        if (kernels.Prediction() && w.part == "gpu" && w.cls != "table" && w.cls != "default")
        {
            // Scaled to another GPU: the scaling's own measured error comes on top (rows
            // "SOURCE gpu predicted": how far predictions from that GPU's profile were off).
            const auto scaled = table.Error(measuredOn, "gpu", "predicted");
            p.cls += "+predicted";
            p.measured = p.measured && scaled.has_value();
            p.error += scaled.value_or(kUnmeasuredError);
        }
        band.parts.push_back(p);
    }
    // Each part's error is its sources' errors weighted by the time each priced in it.  A
    // step is about the longer of the GPU's work and the host's (they overlap: the one the
    // other waits for bounds it), so the band is how far max(G, H) moves when each part
    // moves by its error: half the distance between max(G(1+eg), H(1+eh)) and
    // max(G(1-eg), H(1-eh)), over max(G, H).  A GPU-bound step keeps the GPU's error unless
    // the host's error could make the host the longer part.
    double g = 0, gErr = 0, h = 0, hErr = 0;
    for (const auto& p : band.parts)
    {
        (p.part == "gpu" ? g : h) += p.share;
        (p.part == "gpu" ? gErr : hErr) += p.share * p.error;
    }
    const double eg = g > 0 ? gErr / g : 0;
    const double eh = h > 0 ? hErr / h : 0;
    const double upper = std::max(g * (1 + eg), h * (1 + eh));
    const double lower = std::max(g * std::max(0.0, 1 - eg), h * std::max(0.0, 1 - eh));
    band.relative = std::max(g, h) > 0 ? (upper - lower) / 2 / std::max(g, h) : 0;
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
    std::string line =
        fmt::format("error band: ±{:.1f}% of each simulated time (", 100.0 * relative);
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
