// How far the host-time model is from a program it never saw: each program a profile
// recorded host time of is left out in turn, the model is learned from the others
// (gpu_model/profile/learned_host_model.h), and every recorded gap of the left-out program
// is priced by it as a simulation would price it (the calls before the gap, then shorter
// contexts, the call's kind, every gap).  The sum over a run is its host time; the
// program's own table (what a recorded simulation charges) is priced the same way, so the
// two errors compare the model with the best the recording itself can do.  Only the
// second half of each recorded thread counts: its steady steps.
//
// A program is left out by its name (ProgramName: zoo.py with every model it ran), so the
// model never sees the left-out program's runs, whatever arguments they had.
//
//   phantora-host-model-accuracy profiles/H200.sqlite [profiles/H100.sqlite ...] [--tsv F]
//       [--explain] [--by-code-path] [--without code-path|steady|hit-weights|min-samples ...]
//
// --without turns one of the model's rules off (host_time_model.h, learned_host_model.h),
// to show what each one does.
#include "gpu_model/profile/learned_host_model.h"
#include "gpu_model/profile/profile_reader.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace
{

using namespace phantora;

struct Sums
{
    double recorded{0};
    double model{0};
    double own{0};
    std::size_t gaps{0};
    std::map<host_time::Source, std::size_t> bySource;
    /// The last call before a gap -> model minus recorded, summed (--explain).
    std::map<std::string, double> overByLast;
};

/// Prices each recorded gap of \p threads (scaled by \p scale) with \p model and \p own.
void Price(const std::vector<host_time::Sequence>& threads, double scale,
           const host_time::GapTable& model, const host_time::GapTable& own, Sums& sums)
{
    for (const auto& s : threads)
    {
        host_time::Context ctx;
        for (std::size_t i = 0; i + 1 < s.labels.size(); ++i)
        {
            ctx.Push(host_time::HostLabel::FromText(s.labels[i]));
            // The second half of a thread's gaps: steady steps.  The first holds the
            // start-up between the first GPU calls (building the model, the optimizer, the
            // data loader: seconds, once), which no step pays and a simulation measures.
            if (s.gapBeforeNs[i + 1] < 0 || i < host_time::SteadyFrom(s))
            {
                continue;
            }
            const auto m = model.Lookup(ctx);
            const auto o = own.Lookup(ctx);
            sums.recorded += static_cast<double>(s.gapBeforeNs[i + 1]) * scale;
            sums.model += m ? static_cast<double>(m->ns) : 0.0;
            sums.own += o ? static_cast<double>(o->ns) : 0.0;
            ++sums.gaps;
            if (m)
            {
                ++sums.bySource[m->source];
                const std::string& l = s.labels[i];
                sums.overByLast[l.substr(0, std::min<std::size_t>(l.find('@'), 90))] +=
                    static_cast<double>(m->ns) - static_cast<double>(s.gapBeforeNs[i + 1]) * scale;
            }
        }
    }
}

/// The calls after which \p sums's model misses most, \p n of them, per run of \p runs.
void PrintWorst(const Sums& sums, std::size_t runs, std::size_t n, const char* indent)
{
    std::vector<std::pair<double, std::string>> worst;
    for (const auto& [last, over] : sums.overByLast)
    {
        worst.emplace_back(-std::abs(over), last);
    }
    std::sort(worst.begin(), worst.end());
    for (std::size_t k = 0; k < worst.size() && k < n; ++k)
    {
        std::printf("%safter %-90s %+10.1f ms/run\n", indent, worst[k].second.c_str(),
                    sums.overByLast.at(worst[k].second) / 1e6 / static_cast<double>(runs));
    }
}

double Pct(double sim, double real)
{
    return real > 0 ? 100.0 * (sim - real) / real : 0.0;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"host-time model accuracy: each recorded program left out of the model in turn"};
    std::vector<std::string> files;
    std::string tsv;
    app.add_option("profiles", files, "profile databases")->required()->check(CLI::ExistingFile);
    app.add_option("--tsv", tsv, "also write one row per program here");
    bool explain = false;
    bool byCodePath = false;
    app.add_flag("--by-code-path", byCodePath,
                 "also one row per code path of each left-out program (its script and word "
                 "arguments: zoo.py --model llama and --model resnet), priced by the same model");
    app.add_flag("--explain", explain,
                 "after each program, the calls whose following gaps the model misses most");
    std::vector<std::string> without;
    app.add_option("--without", without,
                   "learn the model without a rule: code-path (programs by script alone), steady "
                   "(learn from every gap), hit-weights (each program once), min-samples (keys "
                   "seen once count), host-speed (no run scaled by its host's measured speed)")
        ->check(CLI::IsMember({"code-path", "steady", "hit-weights", "min-samples", "host-speed"}));
    int maxDepth = host_time::kDepth;
    app.add_option("--max-depth", maxDepth, "the longest context the model learns")
        ->check(CLI::Range(1, host_time::kDepth));
    std::string leave = "program";
    app.add_option("--leave", leave,
                   "what is left out in turn: program (by its name: the harness's left-out "
                   "tables) or code-path (one script and its word arguments; the script's "
                   "other code paths stay, as other models of a recorded framework would)")
        ->check(CLI::IsMember({"program", "code-path"}));
    std::size_t minPrograms = 1;
    app.add_option("--min-programs", minPrograms, "the fewest programs a key of the model needs");
    CLI11_PARSE(app, argc, argv);
    profile::LearnOptions options;
    options.maxDepth = maxDepth;
    options.leaveOutCodePaths = leave == "code-path";
    options.model.minPrograms = minPrograms;
    bool scaleByHostSpeed = true;
    for (const std::string& rule : without)
    {
        if (rule == "code-path")
        {
            options.byCodePath = false;
        }
        else if (rule == "steady")
        {
            options.steadyOnly = false;
        }
        else if (rule == "hit-weights")
        {
            options.model.weightByHits = false;
        }
        else if (rule == "min-samples")
        {
            options.model.minSamples = 1;
        }
        else if (rule == "host-speed")
        {
            scaleByHostSpeed = false;
        }
    }

    std::ofstream out;
    if (!tsv.empty())
    {
        out.open(tsv);
        if (!out)
        {
            std::fprintf(stderr, "phantora-host-model-accuracy: cannot write %s\n", tsv.c_str());
            return 1;
        }
        out << "profile\tprogram\truns\tgaps\tsteady_host_ms_per_run\tmodel_error_pct\t"
               "own_table_error_pct\n";
    }
    for (const std::string& file : files)
    {
        const profile::ProfileReader profile{std::filesystem::path(file)};
        const double reference = scaleByHostSpeed ? profile::ReferenceHostNs(profile) : 0.0;
        std::map<std::string, std::vector<std::string>> byProgram;
        for (const auto& [run, r] : profile.Runs())
        {
            if (r.hostGaps)
            {
                byProgram[options.leaveOutCodePaths ? profile::ModelProgram(r) : r.program]
                    .push_back(run);
            }
        }
        std::printf("%s: %zu programs recorded host time (reference host %.0f ns)\n", file.c_str(),
                    byProgram.size(), reference);
        std::printf("  %-20s %5s %9s %12s %12s %10s %10s %8s  %s\n", "left out", "runs", "gaps",
                    "steady ms/run", "model ms", "model err", "own table", "programs",
                    "model's keys");
        double sumAbs = 0;
        double maxAbs = 0;
        double pathSumAbs = 0;
        double pathMaxAbs = 0;
        std::size_t paths = 0;
        for (const auto& [program, runs] : byProgram)
        {
            const auto learned = profile::LearnHostModel(profile, options, reference, {program});
            if (learned.table.Empty())
            {
                std::printf("  %-20s (no other program to learn from)\n", program.c_str());
                continue;
            }
            host_time::GapSamples ownSamples;
            std::vector<std::pair<std::vector<host_time::Sequence>, double>> threads;
            for (const auto& run : runs)
            {
                const double scale = profile::ToReferenceHost(profile.Runs().at(run), reference);
                threads.emplace_back(profile.HostSequences({run}), scale);
                for (const auto& t : threads.back().first)
                {
                    ownSamples.Add(t, scale);
                }
            }
            const auto own = ownSamples.Reduce(host_time::GapStatistic::Median);
            Sums sums;
            // The code paths of the program (ModelProgram), each priced alone as well.
            std::map<std::string, std::pair<Sums, std::size_t>> byPath;
            for (std::size_t k = 0; k < runs.size(); ++k)
            {
                Price(threads[k].first, threads[k].second, learned.table, own, sums);
                if (byCodePath)
                {
                    auto& [pathSums, pathRuns] =
                        byPath[profile::ModelProgram(profile.Runs().at(runs[k]))];
                    Price(threads[k].first, threads[k].second, learned.table, own, pathSums);
                    ++pathRuns;
                }
            }
            const double err = Pct(sums.model, sums.recorded);
            sumAbs += std::abs(err);
            maxAbs = std::max(maxAbs, std::abs(err));
            std::string mix;
            for (const auto& [source, n] : sums.bySource)
            {
                mix += (mix.empty() ? "" : ", ") +
                       std::to_string(static_cast<int>(std::lround(
                           100.0 * static_cast<double>(n) / static_cast<double>(sums.gaps)))) +
                       "% " + host_time::SourceName(source);
            }
            const double perRun = sums.recorded / 1e6 / static_cast<double>(runs.size());
            std::printf("  %-20s %5zu %9zu %12.1f %12.1f %+9.1f%% %+9.1f%% %8zu  %s\n",
                        program.c_str(), runs.size(), sums.gaps, perRun,
                        sums.model / 1e6 / static_cast<double>(runs.size()), err,
                        Pct(sums.own, sums.recorded), learned.programs, mix.c_str());
            for (const auto& [path, entry] : byPath)
            {
                const auto& [p, n] = entry;
                pathSumAbs += std::abs(Pct(p.model, p.recorded));
                pathMaxAbs = std::max(pathMaxAbs, std::abs(Pct(p.model, p.recorded)));
                ++paths;
                std::printf("    %-90.90s %3zu %9zu %9.1f %9.1f %+8.1f%%\n", path.c_str(), n,
                            p.gaps, p.recorded / 1e6 / static_cast<double>(n),
                            p.model / 1e6 / static_cast<double>(n), Pct(p.model, p.recorded));
                if (explain)
                {
                    PrintWorst(p, n, 4, "        ");
                }
            }
            if (explain)
            {
                PrintWorst(sums, runs.size(), 6, "      ");
            }
            if (out)
            {
                out << file << '\t' << program << '\t' << runs.size() << '\t' << sums.gaps << '\t'
                    << perRun << '\t' << err << '\t' << Pct(sums.own, sums.recorded) << '\n';
            }
        }
        if (!byProgram.empty())
        {
            std::printf("  left out: mean |error| %.1f%%, max %.1f%% over %zu programs\n",
                        sumAbs / static_cast<double>(byProgram.size()), maxAbs, byProgram.size());
            if (paths > 0)
            {
                std::printf("  by code path: mean |error| %.1f%%, max %.1f%% over %zu code paths\n",
                            pathSumAbs / static_cast<double>(paths), pathMaxAbs, paths);
            }
        }
    }
    return 0;
}
