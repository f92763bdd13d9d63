// phantora-nccl-tests: nccl-tests' *_perf on the simulated cluster.  Each size's
// collective runs on GPUs 0 .. N-1 of the scenario's otherwise idle network, through the
// same NCCL model and transport as phantora-cluster, -n calls back to back as nccl-tests
// issues them (each rank starts its next call once its own part of the previous ended),
// and the table has nccl-tests' columns: the slowest rank's time per call.
// NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS act as on a real run.
#include "nccl/environment.h"
#include "nccl/selection.h"
#include "nccl_bench.h"
#include "scenario_loader.h"
#include "units.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fmt/format.h>
#include <optional>
#include <string>

namespace
{

/// nccl-tests' sizes: "1K", "64M", "1G" are powers of 1024; "4KiB", "1GB" as in scenarios.
std::optional<uint64_t> ParseSize(const std::string& text)
{
    if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front())))
    {
        std::size_t used = 0;
        const uint64_t v = std::stoull(text, &used);
        const std::string unit = text.substr(used);
        if (unit.empty())
        {
            return v;
        }
        if (unit == "K" || unit == "k")
        {
            return v << 10;
        }
        if (unit == "M")
        {
            return v << 20;
        }
        if (unit == "G")
        {
            return v << 30;
        }
    }
    return phantora::ParseBytes(text);
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"phantora-nccl-tests: nccl-tests on the simulated cluster"};
    std::string scenarioFile;
    std::string op = "all_reduce";
    uint32_t ngpus = 0;
    std::string minBytes = "1K";
    std::string maxBytes = "1G";
    uint64_t stepFactor = 2;
    std::string transport;
    uint32_t iters = 20; // nccl-tests' -n default
    app.add_option("--scenario", scenarioFile, "scenario file (TOML)")->required();
    app.add_option("--op", op,
                   "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all");
    app.add_option("--ngpus", ngpus, "GPUs taking part (default: all of the scenario's)");
    app.add_option("--min-bytes,-b", minBytes, "smallest size, e.g. 1K");
    app.add_option("--max-bytes,-e", maxBytes, "largest size, e.g. 1G");
    app.add_option("--step-factor,-f", stepFactor, "size multiplier between rows")
        ->check(CLI::Range(uint64_t{2}, uint64_t{1} << 20));
    app.add_option("--transport", transport, "override the scenario's transport: packet or flow")
        ->check(CLI::IsMember({"packet", "flow"}));
    app.add_option("--iters,-n", iters,
                   "calls back to back per size, each rank starting its next once its own part "
                   "of the previous ended (nccl-tests' -n)")
        ->check(CLI::Range(1U, 1000000U));
    CLI11_PARSE(app, argc, argv);
    try
    {
        phantora::Scenario scenario = phantora::LoadScenario(scenarioFile);
        if (!transport.empty())
        {
            scenario.network.transport = transport;
        }
        // NCCL reads these in the benchmark's process, as on a real nccl-tests run.
        scenario.nccl = phantora::nccl::WithEnvironment(scenario.nccl,
                                                        phantora::nccl::Environment::OfProcess());
        const auto kind = phantora::ParseCollectiveKind(op);
        if (!kind || *kind == phantora::nccl::CollectiveKind::SendRecv)
        {
            fmt::print(stderr, "unknown --op '{}'\n", op);
            return 2;
        }
        const auto lo = ParseSize(minBytes);
        const auto hi = ParseSize(maxBytes);
        if (!lo || !hi || *lo == 0 || *lo > *hi)
        {
            fmt::print(stderr, "bad --min-bytes/--max-bytes ({} .. {})\n", minBytes, maxBytes);
            return 2;
        }
        if (ngpus == 0)
        {
            ngpus = scenario.topology.gpus;
        }
        const bool reduces = *kind == phantora::nccl::CollectiveKind::AllReduce ||
                             *kind == phantora::nccl::CollectiveKind::ReduceScatter ||
                             *kind == phantora::nccl::CollectiveKind::Reduce;
        bool headerPrinted = false;
        for (uint64_t bytes = *lo; bytes <= *hi; bytes *= stepFactor)
        {
            const auto r = phantora::BenchCollective(scenario, *kind, ngpus, bytes, iters);
            // After the first run, so that a network the scenario cannot build (a GPU
            // with no path to another) is reported alone, not under a table header.
            if (!headerPrinted)
            {
                fmt::print("# {} on {} of {} GPUs, scenario {}, {} transport\n", op, ngpus,
                           scenario.topology.gpus, scenario.name, scenario.network.transport);
                fmt::print("# {:>12} {:>12} {:>8} {:>6} {:>10} {:>8} {:>8}  {}\n", "size(B)",
                           "count", "type", "redop", "time(us)", "algbw", "busbw", "nccl");
                headerPrinted = true;
            }
            const double algbw = static_cast<double>(bytes) / (r.timeUs * 1e3);
            const double busbw = algbw * phantora::BusBandwidthFactor(*kind, ngpus);
            fmt::print("  {:>12} {:>12} {:>8} {:>6} {:>10.2f} {:>8.2f} {:>8.2f}  {}/{}/{}ch\n",
                       bytes, bytes / 4, "float", reduces ? "sum" : "none", r.timeUs, algbw, busbw,
                       r.algorithm, r.protocol, r.nChannels);
            if (bytes > *hi / stepFactor)
            {
                break;
            }
        }
    }
    catch (const std::exception& e)
    {
        fmt::print(stderr, "phantora-nccl-tests: {}\n", e.what());
        return 1;
    }
    return 0;
}
