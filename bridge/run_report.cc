#include "run_report.h"

#include "kernel_cost_report.h"

#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace phantora
{

namespace
{

const char* PhaseName(RankPhase p)
{
    switch (p)
    {
    case RankPhase::NotConnected:
        return "never connected";
    case RankPhase::Running:
        return "running";
    case RankPhase::Waiting:
        return "waiting";
    case RankPhase::Finished:
        return "finished";
    case RankPhase::Exited:
        return "exited";
    }
    return "?";
}

std::string Mib(uint64_t bytes)
{
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / 1048576.0);
}

} // namespace

void PrintSummary(const SimulationEngine& engine, const RunInfo& info)
{
    std::printf("\n%-6s %18s %9s %8s %12s %14s %12s\n", "rank", "simulated time", "kernels",
                "copies", "collectives", "GPU busy", "peak memory");
    for (int rank = 0; rank < engine.WorldSize(); ++rank)
    {
        const RankState& r = engine.Ranks()[static_cast<std::size_t>(rank)];
        const DeviceTimeline& tl = engine.Timeline(rank);
        std::printf("%-6d %15.6f ms %9llu %8llu %12llu %11.6f ms %12s\n", rank,
                    static_cast<double>(r.clockNs) / 1e6,
                    static_cast<unsigned long long>(r.kernels),
                    static_cast<unsigned long long>(r.copies),
                    static_cast<unsigned long long>(r.collectives),
                    static_cast<double>(tl.BusyNs()) / 1e6, Mib(r.peakDeviceBytes).c_str());
    }
    PrintKernelCosts(stdout, engine.Kernels());
    std::printf("network: %s-level, simulated up to %.6f ms\n", engine.Network().TransportName(),
                static_cast<double>(engine.Network().NowNs()) / 1e6);
    std::printf("wall time %.3f s\n", info.wallTimeS);
    std::fflush(stdout);
}

void WriteJsonReport(const std::filesystem::path& file, const SimulationEngine& engine,
                     const RunInfo& info)
{
    nlohmann::json j;
    j["scenario"] = {{"file", info.scenarioFile}, {"name", info.scenarioName}};
    j["command"] = info.command;
    j["ok"] = info.ok;
    if (!info.ok)
    {
        j["failure"] = info.failure;
    }
    j["wall_time_s"] = info.wallTimeS;
    j["network"] = {{"transport", engine.Network().TransportName()},
                    {"simulated_until_s", static_cast<double>(engine.Network().NowNs()) * 1e-9}};
    j["kernels"] = KernelCostJson(engine.Kernels());
    nlohmann::json ranks = nlohmann::json::array();
    for (int rank = 0; rank < engine.WorldSize(); ++rank)
    {
        const RankState& r = engine.Ranks()[static_cast<std::size_t>(rank)];
        const DeviceTimeline& tl = engine.Timeline(rank);
        ranks.push_back({{"rank", rank},
                         {"pid", r.pid},
                         {"state", PhaseName(r.phase)},
                         {"simulated_time_s", static_cast<double>(r.clockNs) * 1e-9},
                         {"simulated_time_ns", r.clockNs},
                         {"kernels", r.kernels},
                         {"copies", r.copies},
                         {"collectives", r.collectives},
                         {"gpu_busy_s", static_cast<double>(tl.BusyNs()) * 1e-9},
                         {"peak_device_bytes", r.peakDeviceBytes},
                         {"last_call", r.lastCall}});
    }
    j["ranks"] = ranks;
    std::ofstream out(file);
    if (!out)
    {
        throw std::runtime_error(fmt::format("cannot write the report to {}", file.string()));
    }
    out << j.dump(2) << "\n";
}

} // namespace phantora
