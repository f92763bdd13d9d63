#include "kernel_cost_report.h"

#include <string>

namespace phantora
{

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
        {"coverage", {{"measured_share", k.MeasuredShare()}, {"by_source", sources}}},
        {"top_misses", misses}};
    return j;
}

void PrintKernelCosts(std::FILE* out, const KernelCostTable& k, std::size_t top)
{
    const auto& by = k.BySource();
    auto ops = [&](CostSource s) { return static_cast<unsigned long long>(by[size_t(s)].ops); };
    std::fprintf(out,
                 "GPU op durations: %llu from the scenario table, %llu measured (profile), %llu "
                 "scaled from other shapes, %llu from the bytes they copy, %llu from the same "
                 "kernel template, %llu roofline/bandwidth model, %llu defaulted; %.1f%% of the "
                 "GPU time measured or given\n",
                 ops(CostSource::Table), ops(CostSource::Measured), ops(CostSource::ShapeScaled),
                 ops(CostSource::Bytes), ops(CostSource::Family), ops(CostSource::Roofline),
                 ops(CostSource::Default), 100.0 * k.MeasuredShare());
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
                     "  %llu of the measured ops timed from the profile's runs of %s itself (the "
                     "same op at other arguments, or measured in other programs, can differ)\n",
                     static_cast<unsigned long long>(k.FromProgram()),
                     k.PreferredProgram().c_str());
    }
    std::size_t shown = 0;
    for (const auto& m : k.Misses())
    {
        if (shown++ == top)
        {
            break;
        }
        std::fprintf(out, "  estimated (%s): %s, %llu launches, %.3f ms\n",
                     CostSourceName(m.source), m.key.Describe().c_str(),
                     static_cast<unsigned long long>(m.count), static_cast<double>(m.ns) / 1e6);
    }
}

} // namespace phantora
