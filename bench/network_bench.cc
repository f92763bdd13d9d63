// One NCCL collective alone on a scenario's network, timed on the host: how fast the
// ns-3 transports simulate (wall time, events per second), not how fast the cluster is.
// The collective runs straight on the transport, as NetworkModel runs it, without the
// bridge around it, so the figure is the network simulation's own cost.
//
//   phantora-bench-network --scenario scenarios/cluster-2x8-h100-ib.toml --bytes 256MiB
//   phantora-bench-network --scenario scenarios/cluster-128x8-h100-ib.toml --bytes 1GiB
//       --transport flow --algo ring --channels 1
#include "nccl/plan.h"
#include "nccl_bench.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/simulator.h"
#include "scenario_loader.h"
#include "topology_from_scenario.h"
#include "units.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <exception>
#include <fmt/format.h>
#include <numeric>
#include <string>
#include <vector>

namespace
{

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from, Clock::time_point to)
{
    return std::chrono::duration<double>(to - from).count();
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"phantora-bench-network: simulation speed of one collective on a scenario"};
    std::string scenarioFile;
    std::string op = "all_reduce";
    std::string size = "256MiB";
    uint32_t ngpus = 0;
    std::string transport;
    std::string algo;
    std::string proto;
    uint32_t channels = 0;
    app.add_option("--scenario", scenarioFile, "scenario file (TOML)")->required();
    app.add_option("--op", op,
                   "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all");
    app.add_option("--bytes", size, "collective size, e.g. 256MiB or 1GiB");
    app.add_option("--ngpus", ngpus, "GPUs taking part (default: all of the scenario's)");
    app.add_option("--transport", transport, "override the scenario's transport")
        ->check(CLI::IsMember({"packet", "flow"}));
    app.add_option("--algo", algo, "NCCL_ALGO: ring or tree (default: the scenario's)");
    app.add_option("--proto", proto, "NCCL_PROTO: ll, ll128 or simple (default: the scenario's)");
    app.add_option("--channels", channels, "NCCL_MIN/MAX_NCHANNELS (default: the scenario's)")
        ->check(CLI::Range(1U, 64U));
    CLI11_PARSE(app, argc, argv);
    try
    {
        const auto wallStart = Clock::now();
        phantora::Scenario sc = phantora::LoadScenario(scenarioFile);
        if (!transport.empty())
        {
            sc.network.transport = transport;
        }
        if (!algo.empty())
        {
            sc.nccl.algorithm = algo;
        }
        if (!proto.empty())
        {
            sc.nccl.protocol = proto;
        }
        if (channels > 0)
        {
            sc.nccl.minChannels = channels;
            sc.nccl.maxChannels = channels;
        }
        const auto kind = phantora::ParseCollectiveKind(op);
        const auto bytes = phantora::ParseBytes(size);
        if (!kind || !bytes || *bytes == 0)
        {
            fmt::print(stderr, "bad --op '{}' or --bytes '{}'\n", op, size);
            return 2;
        }
        ngpus = ngpus == 0 ? sc.topology.gpus : ngpus;
        if (ngpus > sc.topology.gpus)
        {
            fmt::print(stderr, "the scenario has {} GPUs; asked for {}\n", sc.topology.gpus, ngpus);
            return 2;
        }
        ns3::Time::SetResolution(ns3::Time::PS);
        auto topo = phantora::BuildTopology(sc);
        auto net = phantora::InstallTransport(sc, topo);
        phantora::nccl::CommShape shape;
        shape.nRanks = ngpus;
        shape.ranksPerNode = std::min(ngpus, std::max(sc.topology.gpusPerNode, 1U));
        const auto setupEnd = Clock::now();

        std::vector<uint32_t> gpus(ngpus);
        std::iota(gpus.begin(), gpus.end(), 0);
        phantora::nccl::Plan plan;
        std::size_t transfers = 0;
        ns3::Time done = ns3::Seconds(-1);
        // Built once the simulation runs: before, ns-3 books every Time made (to convert
        // them on a resolution change), which would cost more than the plan itself.
        ns3::Simulator::ScheduleNow(
            [&]
            {
                plan = phantora::nccl::MakePlan(*kind, shape, *bytes, sc.nccl);
                transfers = plan.transfers.size();
                ns3::NcclPlanExecutor::Start(net, plan, gpus,
                                             [&] { done = ns3::Simulator::Now(); });
            });
        ns3::Simulator::Run();
        const auto runEnd = Clock::now();
        const uint64_t events = ns3::Simulator::GetEventCount();
        ns3::Simulator::Destroy();
        if (done.IsNegative())
        {
            fmt::print(stderr, "the collective never completed\n");
            return 1;
        }
        const double simS = done.GetSeconds();
        const double runS = Seconds(setupEnd, runEnd);
        fmt::print("scenario      {} ({}), {} of {} GPUs, {} per node, {} transport\n", sc.name,
                   scenarioFile, ngpus, sc.topology.gpus, sc.topology.gpusPerNode,
                   sc.network.transport);
        fmt::print("collective    {} of {} B: {}/{}, {} channel(s), {} transfers\n", op, *bytes,
                   plan.algorithm, plan.protocol, plan.nChannels, transfers);
        fmt::print("simulated     {:.3f} ms (busbw {:.2f} GB/s)\n", simS * 1e3,
                   static_cast<double>(*bytes) / simS / 1e9 *
                       phantora::BusBandwidthFactor(*kind, ngpus));
        fmt::print("wall time     {:.2f} s (setup {:.2f} s, run {:.2f} s)\n",
                   Seconds(wallStart, runEnd), Seconds(wallStart, setupEnd), runS);
        fmt::print("events        {} ({:.2f} M events/s)\n", events,
                   static_cast<double>(events) / runS / 1e6);
    }
    catch (const std::exception& e)
    {
        fmt::print(stderr, "phantora-bench-network: {}\n", e.what());
        return 1;
    }
    return 0;
}
