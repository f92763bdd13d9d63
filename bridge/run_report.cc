#include "run_report.h"

#include "console_lines.h"
#include "host_time/host_gap_table.h"
#include "kernel_cost_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace phantora
{

namespace
{

std::string Mib(uint64_t bytes)
{
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / 1048576.0);
}

/// Where a rank's GPU time went, from 0 to the later of its clock and its GPU's last op:
/// compute (kernels, copies, memsets; with or without a collective beside it), exposed
/// communication (a collective and nothing else), idle (nothing); overlap is the part of
/// compute during which a collective also ran.  compute + exposed + idle = window.
struct TimeShares
{
    int64_t windowNs{0};
    int64_t computeNs{0};
    int64_t exposedCommNs{0};
    int64_t overlapNs{0};
    int64_t idleNs{0};

    double Share(int64_t ns) const
    {
        return windowNs > 0 ? static_cast<double>(ns) / static_cast<double>(windowNs) : 0.0;
    }
};

TimeShares SharesOf(const RankState& r, const DeviceTimeline& tl)
{
    TimeShares t;
    const auto& compute = tl.ComputeSpans();
    const auto& comm = tl.CollectiveSpans();
    t.windowNs = r.clockNs;
    for (const auto* set : {&compute, &comm})
    {
        if (!set->Merged().empty())
        {
            t.windowNs = std::max(t.windowNs, set->Merged().back().second);
        }
    }
    t.computeNs = compute.TotalNs();
    t.overlapNs = compute.OverlapNs(comm);
    t.exposedCommNs = comm.TotalNs() - t.overlapNs;
    t.idleNs = t.windowNs - t.computeNs - t.exposedCommNs;
    return t;
}

/// Host time charged between GPU calls over all ranks, by host_time::Source.
HostTimeProfile::Charged SumHostTime(const SimulationEngine& engine)
{
    HostTimeProfile::Charged t;
    for (const RankState& r : engine.Ranks())
    {
        for (std::size_t i = 0; i < t.ns.size(); ++i)
        {
            t.ns[i] += r.hostTimeNs[i];
            t.gaps[i] += r.hostTimeGaps[i];
        }
        t.readbacksServed += r.readbacksServed;
        t.readbacksZeros += r.readbacksZeros;
    }
    return t;
}

void PrintWrapped(const std::string& line)
{
    phantora::PrintWrapped(stdout, line, kSummaryWidth);
}

/// One line: where the host time between GPU calls came from.
void PrintHostTime(const SimulationEngine& engine, bool readbacks = false)
{
    const HostTimeProfile::Charged charged = SumHostTime(engine);
    PrintWrapped(readbacks ? engine.HostTime().DescribeReadbacks(charged)
                           : engine.HostTime().Describe(charged));
}

ErrorBand BandOf(const SimulationEngine& engine, const RunInfo& info)
{
    return ComputeErrorBand(engine.Kernels(), info.gpuModel, engine.HostTime(), SumHostTime(engine),
                            info.errorBands);
}

nlohmann::json ErrorBandJson(const SimulationEngine& engine, const RunInfo& info)
{
    const ErrorBand band = BandOf(engine, info);
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& p : band.parts)
    {
        parts.push_back({{"part", p.part},
                         {"source", p.cls},
                         {"share", p.share},
                         {"error", p.error},
                         {"measured", p.measured}});
    }
    return {{"relative", band.relative},
            {"parts", parts},
            {"gpu", info.gpuModel},
            {"table", info.errorBands.File().string()}};
}

nlohmann::json HostTimeJson(const SimulationEngine& engine)
{
    const HostTimeProfile& p = engine.HostTime();
    const HostTimeProfile::Charged t = SumHostTime(engine);
    nlohmann::json sources = nlohmann::json::object();
    for (std::size_t i = 0; i < t.ns.size(); ++i)
    {
        sources[host_time::SourceName(static_cast<host_time::Source>(i))] = {
            {"ns", t.ns[i]}, {"gaps", t.gaps[i]}};
    }
    const char* origin = p.origin == HostTimeOrigin::Recording ? "recording"
                         : p.origin == HostTimeOrigin::Model   ? "model"
                                                               : "measured";
    return {{"origin", origin},
            {"model_programs", p.modelPrograms},
            {"model_runs", p.modelRuns},
            {"recorded_runs", p.runs},
            {"same_arguments", p.sameArguments},
            {"recorded_world_size", p.recordedRanks},
            {"recorded_gaps", p.gaps},
            {"table_keys", p.keys},
            {"local_scale", p.localScale},
            {"local_scale_source", p.localScaleSource},
            {"recording_host_speed_ns", p.recordingHostNs},
            {"local_host_speed_ns", p.localHostNs},
            {"by_source", sources},
            {"readbacks",
             {{"served", t.readbacksServed},
              {"zeros", t.readbacksZeros},
              {"recorded_reads", p.recordedReads},
              {"keys_served", p.readbackKeys}}}};
}

} // namespace

void PrintSummary(const SimulationEngine& engine, const RunInfo& info)
{
    std::printf("\n%-6s %18s %9s %8s %12s %14s %12s %9s %9s %9s\n", "rank", "simulated time",
                "kernels", "copies", "collectives", "GPU busy", "peak memory", "compute",
                "comm", "idle");
    const FoldLayout& fold = engine.Fold();
    for (int rank = 0; rank < engine.WorldSize(); ++rank)
    {
        if (!fold.IsLive(rank))
        {
            continue; // its live rank's line stands for it
        }
        const RankState& r = engine.Ranks()[static_cast<std::size_t>(rank)];
        const DeviceTimeline& tl = engine.Timeline(rank);
        const TimeShares t = SharesOf(r, tl);
        std::printf("%-6d %15.6f ms %9llu %8llu %12llu %11.6f ms %12s %8.1f%% %8.1f%% %8.1f%%\n",
                    rank,
                    static_cast<double>(r.clockNs) / 1e6,
                    static_cast<unsigned long long>(r.kernels),
                    static_cast<unsigned long long>(r.copies),
                    static_cast<unsigned long long>(r.collectives),
                    static_cast<double>(tl.BusyNs()) / 1e6, Mib(r.peakDeviceBytes).c_str(),
                    100.0 * t.Share(t.computeNs), 100.0 * t.Share(t.exposedCommNs),
                    100.0 * t.Share(t.idleNs));
    }
    if (fold.Folds())
    {
        PrintWrapped(fmt::format("folded: {}; each of the {} absent ranks is its live replica "
                                 "above (docs/folding.md)",
                                 fold.Describe(), fold.WorldSize() - fold.LiveCount()));
    }
    int64_t networkNs = 0;
    int64_t inSituNs = 0;
    for (int rank = 0; rank < engine.WorldSize(); ++rank)
    {
        networkNs += engine.Timeline(fold.Representative(rank)).CollectiveNetworkNs();
        inSituNs += engine.Timeline(fold.Representative(rank)).CollectiveInSituNs();
    }
    if (inSituNs > networkNs && networkNs > 0)
    {
        // Why a collective took longer here than in nccl-tests: the users' first question.
        PrintWrapped(fmt::format(
            "collectives beside memory-bound kernels: {:.3f} ms where the "
            "network alone takes {:.3f} ms (+{:.1f}%, all ranks; [gpu] "
            "comm_rate_beside_memory_bound)",
            static_cast<double>(inSituNs) / 1e6, static_cast<double>(networkNs) / 1e6,
            100.0 * static_cast<double>(inSituNs - networkNs) / static_cast<double>(networkNs)));
    }
    int64_t blockedGapNs = 0;
    for (int rank = 0; rank < engine.WorldSize(); ++rank)
    {
        blockedGapNs += engine.Timeline(fold.Representative(rank)).BlockedGapNs();
    }
    if (blockedGapNs > 0)
    {
        PrintWrapped(fmt::format("stream gaps beside streams blocked on events: {:.3f} ms (all "
                                 "ranks; [gpu] stream_gap_beside_blocked)",
                                 static_cast<double>(blockedGapNs) / 1e6));
    }
    PrintKernelCosts(stdout, engine.Kernels());
    PrintHostTime(engine);
    PrintWrapped(BandOf(engine, info).Describe() +
                 (info.errorBands.Empty()
                      ? " [no error bands read]"
                      : " [" + info.errorBands.File().filename().string() + "]"));
    if (engine.HostTime().origin == HostTimeOrigin::Recording)
    {
        PrintHostTime(engine, true); // read-back values come with a recording of host time
    }
    std::printf("network: %s-level, simulated up to %.6f ms\n", engine.Network().TransportName(),
                static_cast<double>(engine.Network().NowNs()) / 1e6);
    const auto& sync = engine.Network().Stats();
    PrintWrapped(fmt::format("synchronisation: {}; {} checkpoints, {} past events, {} restores, "
                             "{} collectives replayed, {} speculative completions taken back",
                             engine.Optimistic() ? "optimistic" : "conservative", sync.checkpoints,
                             sync.pastEvents, sync.restores, sync.replayedCollectives,
                             sync.discardedCompletions));
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
    // A run that ended early still reports what was simulated up to its end, marked
    // incomplete with the reason (RunEnd: a signal, a failed rank, a deadlock, a timeout).
    j["complete"] = info.ok && info.end == RunEnd::Completed;
    j["end"] = RunEndName(info.ok ? RunEnd::Completed : info.end);
    if (!info.ok)
    {
        j["failure"] = info.failure;
        j["incomplete_reason"] = info.failure;
    }
    j["wall_time_s"] = info.wallTimeS;
    j["network"] = {{"transport", engine.Network().TransportName()},
                    {"simulated_until_s", static_cast<double>(engine.Network().NowNs()) * 1e-9}};
    const auto& sync = engine.Network().Stats();
    j["synchronisation"] = {{"mode", engine.Optimistic() ? "optimistic" : "conservative"},
                            {"checkpoints", sync.checkpoints},
                            {"past_events", sync.pastEvents},
                            {"restores", sync.restores},
                            {"replayed_collectives", sync.replayedCollectives},
                            {"discarded_completions", sync.discardedCompletions}};
    j["kernels"] = KernelCostJson(engine.Kernels());
    j["host_time"] = HostTimeJson(engine);
    j["error_band"] = ErrorBandJson(engine, info);
    const FoldLayout& fold = engine.Fold();
    if (fold.Folds())
    {
        j["fold"] = {{"world_size", fold.WorldSize()},
                     {"replicas", fold.Replicas()},
                     {"stride", fold.Stride()},
                     {"live_ranks", fold.LiveCount()}};
    }
    nlohmann::json ranks = nlohmann::json::array();
    for (int rank = 0; rank < engine.WorldSize(); ++rank)
    {
        // An absent rank is reported as its live replica, which stood for it.
        const int source = fold.Representative(rank);
        const RankState& r = engine.Ranks()[static_cast<std::size_t>(source)];
        const DeviceTimeline& tl = engine.Timeline(source);
        const TimeShares t = SharesOf(r, tl);
        nlohmann::json byGroup = nlohmann::json::array();
        for (const auto& [key, tally] : r.tally)
        {
            byGroup.push_back({{"op", key.first},
                               {"group", key.second},
                               {"count", tally.count},
                               {"bytes", tally.bytes}});
        }
        ranks.push_back({{"rank", rank},
                         {"pid", r.pid},
                         {"state", RankPhaseName(r.phase)},
                         {"simulated_time_s", static_cast<double>(r.clockNs) * 1e-9},
                         {"simulated_time_ns", r.clockNs},
                         {"kernels", r.kernels},
                         {"copies", r.copies},
                         {"collectives", r.collectives},
                         {"graph_nodes", r.graphNodes},
                         {"collectives_by_group", byGroup},
                         {"gpu_busy_s", static_cast<double>(tl.BusyNs()) * 1e-9},
                         {"collective_time_ns",
                          {{"network", tl.CollectiveNetworkNs()},
                           {"beside_memory_bound_kernels", tl.CollectiveInSituNs()}}},
                         {"stream_gap_beside_blocked_ns", tl.BlockedGapNs()},
                         {"peak_device_bytes", r.peakDeviceBytes},
                         {"gpu_time_ns",
                          {{"window", t.windowNs},
                           {"compute", t.computeNs},
                           {"exposed_communication", t.exposedCommNs},
                           {"overlapped_communication", t.overlapNs},
                           {"idle", t.idleNs}}},
                         {"time_shares",
                          {{"compute", t.Share(t.computeNs)},
                           {"exposed_communication", t.Share(t.exposedCommNs)},
                           {"overlapped_communication", t.Share(t.overlapNs)},
                           {"idle", t.Share(t.idleNs)}}},
                         {"last_call", r.lastCall}});
        if (source != rank)
        {
            ranks.back()["state"] = RankPhaseName(RankPhase::Folded);
            ranks.back()["folded_into"] = source;
        }
    }
    j["ranks"] = ranks;
    std::ofstream out(file);
    if (!out)
    {
        throw std::runtime_error(fmt::format("cannot write the report to {}", file.string()));
    }
    // replace, not throw: a failure's message quotes a rank's stderr, which need not be UTF-8
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

} // namespace phantora
