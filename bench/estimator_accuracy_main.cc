// How well the GPU model estimates ops its profile lacks: each measured op of a
// scenario's profile estimated without its own measurement (or its program's), or the ops
// of recordings the profile never imported, by op class (estimator_accuracy.h).  The
// figures per class are the error band of an estimate of that class.
//
//   phantora-estimator-accuracy                       (H100 and H200, leave one op out)
//   phantora-estimator-accuracy --leave program --min-us 0 --tsv band.tsv
//   phantora-estimator-accuracy --scenario scenarios/h200-profile.toml
//       --held-out data/raw/profiles/H200/zoo-2026-12-01T2154/*.tsv.zst
#include "gpu_model/estimator_accuracy.h"
#include "scenario_loader.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

using namespace phantora;
namespace fs = std::filesystem;

namespace
{

struct Table
{
    std::string profile; ///< the GPU model
    std::string mode;
    std::vector<ClassAccuracy> rows;
};

std::string Sources(const ClassAccuracy& r)
{
    std::string out;
    for (std::size_t i = 0; i < kCostSources; ++i)
    {
        if (r.bySource[i] > 0)
        {
            out += fmt::format("{}{} {}", out.empty() ? "" : ", ",
                               CostSourceName(static_cast<CostSource>(i)), r.bySource[i]);
        }
    }
    return out;
}

void Print(const Table& t, double minUs)
{
    std::printf("%s, %s, ops of %g us or more\n", t.profile.c_str(), t.mode.c_str(), minUs);
    std::printf("  %-13s %6s %8s %8s %8s %7s %5s  %s\n", "class", "n", "median", "mean", "p90",
                "time", "none", "estimated by");
    for (const ClassAccuracy& r : t.rows)
    {
        std::printf("  %-13s %6zu %7.1f%% %7.1f%% %7.1f%% %6.2fx %5zu  %s\n", OpClassName(r.cls),
                    r.n, 100 * r.medianAbsErr, 100 * r.meanAbsErr, 100 * r.p90AbsErr, r.timeRatio,
                    r.unestimated, Sources(r).c_str());
    }
}

void WriteTsv(const fs::path& file, const std::vector<Table>& tables)
{
    std::ofstream out(file);
    if (!out)
    {
        throw std::runtime_error(fmt::format("cannot write {}", file.string()));
    }
    out << "gpu\tmode\tclass\tn\tmedian_abs_err\tmean_abs_err\tp90_abs_err\ttime_ratio\t"
           "unestimated\n";
    for (const Table& t : tables)
    {
        for (const ClassAccuracy& r : t.rows)
        {
            out << fmt::format("{}\t{}\t{}\t{}\t{:.4f}\t{:.4f}\t{:.4f}\t{:.4f}\t{}\n", t.profile,
                               t.mode, OpClassName(r.cls), r.n, r.medianAbsErr, r.meanAbsErr,
                               r.p90AbsErr, r.timeRatio, r.unestimated);
        }
    }
}

void WriteJson(const fs::path& file, const std::vector<Table>& tables, double minUs)
{
    nlohmann::json j = nlohmann::json::array();
    for (const Table& t : tables)
    {
        nlohmann::json rows = nlohmann::json::array();
        for (const ClassAccuracy& r : t.rows)
        {
            rows.push_back({{"class", OpClassName(r.cls)},
                            {"n", r.n},
                            {"median_abs_err", r.medianAbsErr},
                            {"mean_abs_err", r.meanAbsErr},
                            {"p90_abs_err", r.p90AbsErr},
                            {"time_ratio", r.timeRatio},
                            {"unestimated", r.unestimated}});
        }
        j.push_back({{"gpu", t.profile}, {"mode", t.mode}, {"min_us", minUs}, {"classes", rows}});
    }
    std::ofstream out(file);
    if (!out)
    {
        throw std::runtime_error(fmt::format("cannot write {}", file.string()));
    }
    out << j.dump(1) << "\n";
}

/// The evidence of the error bands (bench/error_bands.py turns it into the rows of
/// profiles/error_bands.tsv that bridge/error_band.h reads): for each program left out (or
/// recording held out) and each op class, how far the estimated time of the class's ops,
/// each weighted by its launches, is from their measured time.  A step is mispriced by
/// that much on the class's share of it: within a program the errors of one class's
/// ops cancel or add up as they do in a run, which the mean |error| of single ops (the
/// tables) does not say.
///
/// With --leave program, also each program's ops measured by other programs too, charged
/// from those (CheckMeasuredElsewhere), as one class "measured_other": what a run of a
/// program the profile never recorded gets for the ops it shares with recorded ones.
void WriteBands(const fs::path& file,
                const std::vector<std::pair<std::string, std::vector<EstimateCheck>>>& byGpu,
                const std::string& mode,
                const std::vector<std::pair<std::string, std::vector<EstimateCheck>>>& elsewhere)
{
    std::ofstream out(file);
    if (!out)
    {
        throw std::runtime_error(fmt::format("cannot write {}", file.string()));
    }
    out << "# phantora-estimator-accuracy " << mode
        << ": per program and op class, |estimated - measured| / measured of the class's "
           "launch-weighted time\n";
    out << "gpu\tprogram\tclass\tops\tmeasured_ns\terror_pct\n";
    for (const auto& [gpu, checks] : byGpu)
    {
        // estimated, measured (launch-weighted), ops
        std::map<std::pair<std::string, OpClass>, std::tuple<double, double, std::size_t>> t;
        for (const EstimateCheck& c : checks)
        {
            if (!c.estimate || c.program.empty())
                continue;
            auto& [est, measured, n] = t[{c.program, c.cls}];
            const double launches = static_cast<double>(c.launches);
            est += static_cast<double>(c.estimate->ns) * launches;
            measured += c.measuredNs * launches;
            ++n;
        }
        for (const auto& [k, v] : t)
        {
            const auto& [est, measured, n] = v;
            out << fmt::format("{}\t{}\t{}\t{}\t{:.0f}\t{:.1f}\n", gpu, k.first,
                               OpClassName(k.second), n, measured,
                               100.0 * std::abs(est - measured) / std::max(measured, 1.0));
        }
    }
    for (const auto& [gpu, checks] : elsewhere)
    {
        std::map<std::string, std::tuple<double, double, std::size_t>> t;
        for (const EstimateCheck& c : checks)
        {
            auto& [est, measured, n] = t[c.program];
            est += static_cast<double>(c.estimate->ns) * static_cast<double>(c.launches);
            measured += c.measuredNs * static_cast<double>(c.launches);
            ++n;
        }
        for (const auto& [program, v] : t)
        {
            const auto& [est, measured, n] = v;
            out << fmt::format("{}\t{}\tmeasured_other\t{}\t{:.0f}\t{:.1f}\n", gpu, program, n,
                               measured,
                               100.0 * std::abs(est - measured) / std::max(measured, 1.0));
        }
    }
}

/// A held-out recording's GPU time as a run of its program with this profile would price it
/// (the GPU timeline alone, with no host time): the ops the profile lacks estimated, the
/// ops other programs measured at their samples; each op weighted by its launches, against
/// the recording's own.  The GPU side of a left-out cell's error, op by op.
void PrintHeldOutGpuTime(const profile::ProfileReader& p, const GpuSpec& gpu,
                         const profile::RawLog& log, const std::string& name)
{
    double own = 0, priced = 0, estOwn = 0, estPriced = 0, otherOwn = 0, otherPriced = 0;
    for (const EstimateCheck& c : CheckHeldOut(p, gpu, {log}, 0))
    {
        const double n = static_cast<double>(c.launches);
        estOwn += c.measuredNs * n;
        estPriced += static_cast<double>(c.estimate ? c.estimate->ns : 0) * n;
    }
    for (const auto& [key, durations] : log.samples)
    {
        const profile::OpStats* measured = p.Find(key);
        if (!measured)
            continue;
        const bool span = profile::IsLibraryCall(key.kind);
        const double n = static_cast<double>(durations.size());
        otherOwn += profile::OpStats::FromSamples(durations, "record").OnStreamNs({}, span) * n;
        otherPriced += measured->OnStreamNs({}, span) * n;
    }
    own = estOwn + otherOwn;
    priced = estPriced + otherPriced;
    auto pct = [](double a, double b) { return b > 0 ? 100.0 * (a / b - 1) : 0.0; };
    std::printf("  %s: GPU time %.1f ms priced vs %.1f ms recorded (%+.1f%%): estimated %.1f "
                "vs %.1f ms (%+.1f%%), measured by other programs %.1f vs %.1f ms (%+.1f%%)\n",
                name.c_str(), priced / 1e6, own / 1e6, pct(priced, own), estPriced / 1e6,
                estOwn / 1e6, pct(estPriced, estOwn), otherPriced / 1e6, otherOwn / 1e6,
                pct(otherPriced, otherOwn));
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"phantora-estimator-accuracy: leave-one-out errors of the op estimators, by "
                 "op class"};
    std::vector<std::string> scenarios;
    std::string leave = "op";
    std::vector<std::string> heldOut;
    double minUs = 5;
    std::string tsv, json;
    bool listOps = false;
    app.add_option("--scenario", scenarios,
                   "scenario whose [gpu] and [kernels] profile to check (default: "
                   "scenarios/h100-profile.toml and h200-profile.toml of the source tree)");
    app.add_option("--leave", leave,
                   "what each estimate does not see: op (its own measurement) or program "
                   "(every op its program measured)")
        ->check(CLI::IsMember({"op", "program"}));
    app.add_option("--held-out", heldOut,
                   "raw recorder logs (.tsv, .tsv.zst) not imported into the profile: their "
                   "ops the profile lacks, estimated from it (instead of --leave)");
    app.add_option("--min-us", minUs,
                   "only ops measured at this or longer (shorter ones are launch-bound: a "
                   "relative error says little there)");
    app.add_option("--tsv", tsv, "also write the table here (gpu, mode, class, n, errors)");
    app.add_option("--json", json, "also write the table here as JSON");
    app.add_flag("--ops", listOps, "also print every op's estimate and measurement");
    std::string bands;
    app.add_option("--bands", bands,
                   "also write here, per program left out (or recording held out) and op "
                   "class, the error of the class's launch-weighted time: the evidence "
                   "bench/error_bands.py makes profiles/error_bands.tsv of");
    CLI11_PARSE(app, argc, argv);
    try
    {
        if (scenarios.empty())
        {
            const fs::path dir = fs::path(PHANTORA_SOURCE_DIR) / "scenarios";
            scenarios = {(dir / "h100-profile.toml").string(),
                         (dir / "h200-profile.toml").string()};
        }
        std::vector<profile::RawLog> logs;
        for (const std::string& f : heldOut)
        {
            logs.push_back(profile::RawLog::Read(f));
        }
        std::vector<Table> tables;
        std::vector<std::pair<std::string, std::vector<EstimateCheck>>> bandChecks, elsewhere;
        for (const std::string& file : scenarios)
        {
            const Scenario s = LoadScenario(file);
            if (s.kernels.profile.empty())
            {
                throw std::runtime_error(fmt::format("{} names no [kernels] profile", file));
            }
            const profile::ProfileReader p(s.kernels.profile);
            std::vector<EstimateCheck> checks;
            std::string mode;
            if (!logs.empty())
            {
                checks = CheckHeldOut(p, s.gpu, logs, minUs * 1000);
                mode = fmt::format("held out ({} recordings)", logs.size());
                std::printf("%s, each recording's GPU time as a run of it with %s would price "
                            "it (all ops, launch-weighted):\n",
                            s.gpu.model.c_str(), s.kernels.profile.filename().string().c_str());
                for (std::size_t i = 0; i < logs.size(); ++i)
                    PrintHeldOutGpuTime(p, s.gpu, logs[i], fs::path(heldOut[i]).filename().string());
                if (!bands.empty())
                {
                    // each recording a program of its own for the bands
                    std::vector<EstimateCheck> each;
                    for (std::size_t i = 0; i < logs.size(); ++i)
                    {
                        for (EstimateCheck& c : CheckHeldOut(p, s.gpu, {logs[i]}, minUs * 1000))
                        {
                            c.program = fs::path(heldOut[i]).filename().string();
                            each.push_back(std::move(c));
                        }
                    }
                    bandChecks.emplace_back(s.gpu.model, std::move(each));
                }
            }
            else
            {
                const LeaveOut l = leave == "op" ? LeaveOut::Op : LeaveOut::Program;
                checks = CheckProfile(p, s.gpu, l, minUs * 1000);
                mode = l == LeaveOut::Op ? "leave one op out" : "leave one program out";
            }
            if (listOps)
            {
                for (const EstimateCheck& c : checks)
                {
                    std::string candidates;
                    for (const OpCost& o : c.candidates)
                    {
                        candidates += fmt::format("{}{}={}", candidates.empty() ? "" : ",",
                                                  CostSourceName(o.source), o.ns);
                    }
                    std::printf("%s\t%s\t%.0f\t%lld\t%s\t%.3f\t%lld\t%s\t%s\t%.0f\n",
                                s.gpu.model.c_str(), OpClassName(c.cls), c.measuredNs,
                                c.estimate ? static_cast<long long>(c.estimate->ns) : -1LL,
                                c.estimate ? CostSourceName(c.estimate->source) : "none",
                                c.RelativeError(), static_cast<long long>(c.launches),
                                candidates.c_str(), c.key.Describe().c_str(), c.trafficBytes);
                }
            }
            tables.push_back({s.gpu.model, mode, Summarize(checks)});
            if (logs.empty())
            {
                bandChecks.emplace_back(s.gpu.model, checks);
                if (leave == "program")
                    elsewhere.emplace_back(s.gpu.model, CheckMeasuredElsewhere(p, minUs * 1000));
            }
            Print(tables.back(), minUs);
        }
        if (!bands.empty())
        {
            WriteBands(bands, bandChecks, logs.empty() ? "--leave " + leave : "--held-out",
                       elsewhere);
        }
        if (!tsv.empty())
        {
            WriteTsv(tsv, tables);
        }
        if (!json.empty())
        {
            WriteJson(json, tables, minUs);
        }
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "phantora-estimator-accuracy: %s\n", e.what());
        return 1;
    }
    return 0;
}
