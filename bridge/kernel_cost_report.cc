#include "kernel_cost_report.h"

#include "gpu_model/kernel_short_name.h"

#include <algorithm>
#include <fmt/format.h>
#include <string>
#include <tuple>
#include <vector>

namespace phantora
{

namespace
{
/// Every profile searched, in order (the first is "profile").
std::vector<std::string> ProfileFiles(const KernelCostTable& k)
{
    std::vector<std::string> files;
    if (k.Profile())
    {
        for (const auto& f : k.Profile()->Files())
        {
            files.push_back(f.string());
        }
    }
    return files;
}
/// Each class's share of the predicted GPU time and its time factor, largest first.
std::vector<std::tuple<PredictedClass, double, double>> PredictedShares(const KernelCostTable& k)
{
    double all = 0;
    for (const auto& t : k.ByPredictedClass())
        all += t.ns;
    std::vector<std::tuple<PredictedClass, double, double>> out;
    for (std::size_t i = 0; i < kPredictedClasses; ++i)
    {
        const auto& t = k.ByPredictedClass()[i];
        if (t.ops > 0 && all > 0)
            out.emplace_back(static_cast<PredictedClass>(i), t.ns / all,
                             t.sourceNs > 0 ? t.ns / t.sourceNs : 1.0);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return std::get<1>(a) > std::get<1>(b); });
    return out;
}

nlohmann::json PredictionJson(const KernelCostTable& k)
{
    const GpuPrediction* p = k.Prediction();
    if (!p)
        return nullptr;
    nlohmann::json classes = nlohmann::json::object();
    for (std::size_t i = 0; i < kPredictedClasses; ++i)
    {
        const auto& t = k.ByPredictedClass()[i];
        classes[PredictedClassName(static_cast<PredictedClass>(i))] = {
            {"ops", t.ops}, {"source_gpu_time_s", t.sourceNs * 1e-9}, {"gpu_time_s", t.ns * 1e-9}};
    }
    return {{"target", p->Target().model},
            {"profile_of", p->Source().model},
            {"latency_floor_ns", p->LatencyFloor()},
            {"clock_factor", p->ClockFactor()},
            {"memory_factor", p->MemoryFactor()},
            {"compute_factor", p->ComputeFactor(0, "bf16")},
            {"by_class", classes}};
}
} // namespace

nlohmann::json KernelCostJson(const KernelCostTable& k, std::size_t top)
{
    const auto& by = k.BySource();
    nlohmann::json sources = nlohmann::json::object();
    for (std::size_t i = 0; i < kCostSources; ++i)
    {
        sources[CostSourceName(static_cast<CostSource>(i))] = {
            {"ops", by[i].ops}, {"gpu_time_s", static_cast<double>(by[i].ns) * 1e-9}};
    }
    nlohmann::json misses = nlohmann::json::array();
    for (const auto& m : k.Misses())
    {
        if (misses.size() >= top)
        {
            break;
        }
        misses.push_back({{"op", m.key.Describe()},
                          {"kind", profile::OpKindName(m.key.kind)},
                          {"launches", m.count},
                          {"gpu_time_s", static_cast<double>(m.ns) * 1e-9},
                          {"estimate", CostSourceName(m.source)}});
    }
    nlohmann::json j = {
        {"from_table", by[static_cast<std::size_t>(CostSource::Table)].ops},
        {"measured", by[static_cast<std::size_t>(CostSource::Measured)].ops},
        {"program", k.PreferredProgram()},
        {"measured_from_program", k.FromProgram()},
        {"measured_at_arguments", k.FromArgs()},
        {"defaulted", k.DefaultedCount()},
        {"missing", k.MissedKernels()},
        {"profile", k.Profile() ? k.Profile()->File().string() : std::string()},
        {"profiles", ProfileFiles(k)},
        {"coverage", {{"measured_share", k.MeasuredShare()}, {"by_source", sources}}},
        {"top_misses", misses},
        {"prediction", PredictionJson(k)}};
    return j;
}

void PrintKernelCosts(std::FILE* out, const KernelCostTable& k, std::size_t top)
{
    const auto& by = k.BySource();
    auto ops = [&](CostSource s) { return static_cast<unsigned long long>(by[size_t(s)].ops); };
    // Two lines of at most ~160 characters, so a terminal shows them whole.
    if (const GpuPrediction* p = k.Prediction())
        // Nothing was measured on a predicted GPU: say on which GPU the profile's times were.
        std::fprintf(out,
                     "GPU op durations: %.1f%% of the GPU time measured on the %s (predicted "
                     "for the %s) or given; %llu measured (profile), %llu from the scenario "
                     "table, %llu defaulted\n",
                     100.0 * k.MeasuredShare(), p->Source().model.c_str(),
                     p->Target().model.c_str(), ops(CostSource::Measured), ops(CostSource::Table),
                     ops(CostSource::Default));
    else
        std::fprintf(out,
                     "GPU op durations: %.1f%% of the GPU time measured or given; %llu measured "
                     "(profile), %llu from the scenario table, %llu defaulted\n",
                     100.0 * k.MeasuredShare(), ops(CostSource::Measured), ops(CostSource::Table),
                     ops(CostSource::Default));
    std::fprintf(out,
                 "  estimated: %llu scaled from other shapes, %llu from the bytes they move, "
                 "%llu from the same kernel template, %llu roofline/bandwidth model\n",
                 ops(CostSource::ShapeScaled), ops(CostSource::Bytes), ops(CostSource::Family),
                 ops(CostSource::Roofline));
    if (const GpuPrediction* p = k.Prediction())
    {
        // Which resource scaled how much of the time: what a predicted run rests on.
        std::string line =
            fmt::format("  predicted, not measured: the {} from the {} profile's times,",
                        p->Target().model, p->Source().model);
        for (const auto& [cls, share, factor] : PredictedShares(k))
            line +=
                fmt::format(" {} {:.0f}% x{:.2f},", PredictedClassName(cls), 100.0 * share, factor);
        line.back() = ' ';
        line += fmt::format("(floor {:.2f} us)", p->LatencyFloor() / 1e3);
        std::fprintf(out, "%s\n", Ellipsize(line, kSummaryWidth).c_str());
    }
    if (k.FromArgs() > 0)
    {
        std::fprintf(out,
                     "  %llu of the measured ops timed from samples launched with the same "
                     "arguments\n",
                     static_cast<unsigned long long>(k.FromArgs()));
    }
    if (k.FromProgram() > 0)
    {
        std::fprintf(out,
                     "  %llu measured ops timed from the profile's runs of %s itself (other "
                     "arguments or programs can differ)\n",
                     static_cast<unsigned long long>(k.FromProgram()),
                     k.PreferredProgram().c_str());
    }
    const auto misses = k.Misses();
    const std::size_t shown = std::min(top, misses.size());
    KernelShortNames names;
    for (std::size_t i = 0; i < shown; ++i)
    {
        if (misses[i].key.kind == profile::OpKind::Kernel)
        {
            names.Add(misses[i].key.name);
        }
    }
    for (std::size_t i = 0; i < shown; ++i)
    {
        const auto& m = misses[i];
        const std::string tail =
            fmt::format(", {} launches, {:.3f} ms", static_cast<unsigned long long>(m.count),
                        static_cast<double>(m.ns) / 1e6);
        const std::string head = fmt::format("  estimated ({}): ", CostSourceName(m.source));
        // Kernels by their short name and launch shape (full names: --report, --trace);
        // GEMM and cuDNN signatures cut to what fits the line.
        std::string what =
            m.key.kind == profile::OpKind::Kernel
                ? fmt::format("{} grid=({},{},{}) block=({},{},{})", names.Get(m.key.name),
                              m.key.grid[0], m.key.grid[1], m.key.grid[2], m.key.block[0],
                              m.key.block[1], m.key.block[2])
                : m.key.Describe();
        what =
            Ellipsize(what, kSummaryWidth - std::min(kSummaryWidth / 2, head.size() + tail.size()));
        std::fprintf(out, "%s%s%s\n", head.c_str(), what.c_str(), tail.c_str());
    }
}

} // namespace phantora
