// phantora-cluster: one process that owns the ns-3 simulation of the cluster, the
// bridge the ranks talk to, and the launcher that starts the ranks.
#include "bridge_server.h"
#include "engine/simulation_engine.h"
#include "launcher.h"
#include "program_name.h"
#include "run_report.h"
#include "scenario_loader.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <random>

#ifndef PHANTORA_SOURCE_DIR
#error "PHANTORA_SOURCE_DIR must be defined by the build"
#endif

namespace
{

std::string RandomToken()
{
    std::random_device rd;
    std::string t;
    for (int i = 0; i < 4; ++i)
    {
        t += fmt::format("{:08x}", rd());
    }
    return t;
}

} // namespace

int main(int argc, char** argv)
{
    using namespace phantora;
    CLI::App app{"phantora-cluster: run a real training program on a simulated GPU cluster.\n"
                 "With no arguments it runs the bundled CUDA example on the default scenario.",
                 "phantora-cluster"};
    std::string scenarioFile = std::string(PHANTORA_SOURCE_DIR) + "/scenarios/default.toml";
    int nproc = 0;
    std::string reportFile;
    std::string missingFile;
    std::string traceFile;
    std::string bindAddress = "127.0.0.1";
    int connectTimeout = 120;
    std::string sync = "optimistic";
    std::vector<std::string> command;
    app.add_option("--scenario", scenarioFile, "cluster description (TOML)")->capture_default_str();
    app.add_option("--nproc", nproc, "ranks to start (default: every GPU of the scenario)")
        ->check(CLI::PositiveNumber);
    app.add_option("--report", reportFile, "write a JSON report of the run to this file");
    app.add_option("--missing", missingFile,
                   "write the GPU ops the profile had no measurement for (JSON, for "
                   "gpu_profiler replay --missing)");
    app.add_option("--trace", traceFile,
                   "write a Chrome/Perfetto trace (ranks' blocking calls, streams, network "
                   "flows) to this file");
    app.add_option("--bind", bindAddress, "address the bridge listens on")->capture_default_str();
    app.add_option("--connect-timeout", connectTimeout,
                   "seconds a started rank may take to make its first CUDA call")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--sync", sync,
                   "optimistic: the network runs ahead of the ranks and replays a checkpoint "
                   "when an op arrives in its past; conservative: it never runs past what a "
                   "rank could still change (same results, for comparison)")
        ->check(CLI::IsMember({"optimistic", "conservative"}))
        ->capture_default_str();
    app.add_option("command", command, "the program each rank runs, after --");
    CLI11_PARSE(app, argc, argv);

    const bool defaultProgram = command.empty();
    if (defaultProgram)
    {
        command = {PHANTORA_DEFAULT_PROGRAM, "4194304", "3"};
    }

    Scenario scenario;
    try
    {
        scenario = LoadScenario(scenarioFile);
    }
    catch (const ScenarioError& e)
    {
        std::fprintf(stderr, "phantora-cluster: %s\n", e.what());
        return 2;
    }
    if (nproc == 0)
    {
        nproc = static_cast<int>(scenario.topology.gpus);
    }

    const auto wallStart = std::chrono::steady_clock::now();
    try
    {
        TraceRecorder trace;
        SimulationEngine engine(scenario, nproc, traceFile.empty() ? nullptr : &trace,
                                sync == "optimistic" ? SyncMode::Optimistic
                                                     : SyncMode::Conservative);
        engine.PreferProfileProgram(profile::ProgramName(command));
        engine.SetHostTime(
            HostTimeProfile::Prepare(engine.Kernels().Profile(), command, scenario.cpu));
        ServerOptions options;
        options.bindAddress = bindAddress;
        options.token = RandomToken();
        options.connectTimeout = std::chrono::seconds(connectTimeout);
        BridgeServer server(engine, options);

        std::printf("phantora-cluster: %d ranks on '%s' (%s): %u GPUs, %s-level network\n", nproc,
                    scenario.name.c_str(), scenario.file.c_str(), scenario.topology.gpus,
                    engine.Network().TransportName());
        std::printf("phantora-cluster: running%s:", defaultProgram ? " the bundled example" : "");
        for (const auto& a : command)
        {
            std::printf(" %s", a.c_str());
        }
        std::printf("\n");
        std::fflush(stdout);

        LaunchSpec spec;
        spec.command = command;
        spec.nproc = nproc;
        spec.gpusPerNode = static_cast<int>(scenario.topology.gpusPerNode);
        spec.interposer = PHANTORA_INTERPOSER_PATH;
        if (scenario.workload.moeRouting != WorkloadSpec::MoeRouting::None)
        {
            // python/sitecustomize.py loads python/phantora_moe_routing.py into every
            // Python rank; it reads these two variables.
            const bool skew = scenario.workload.moeRouting == WorkloadSpec::MoeRouting::Skew;
            spec.extraEnv["PHANTORA_MOE_ROUTING"] = skew ? "skew" : "balanced";
            spec.extraEnv["PHANTORA_MOE_SKEW"] = fmt::format("{}", scenario.workload.moeSkew);
            spec.pythonPathPrefix = PHANTORA_PYTHON_SUPPORT_DIR;
        }
        spec.bridgeEndpoint = server.Endpoint();
        spec.token = options.token;
        Launcher launcher;
        launcher.Start(spec);
        const RunOutcome outcome = server.Run(launcher);

        RunInfo info;
        info.scenarioFile = scenario.file.string();
        info.scenarioName = scenario.name;
        info.command = command;
        info.ok = outcome.ok;
        info.failure = outcome.failure;
        info.wallTimeS =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
        PrintSummary(engine, info);
        if (!reportFile.empty())
        {
            WriteJsonReport(reportFile, engine, info);
        }
        if (!missingFile.empty())
        {
            engine.Kernels().WriteMissing(missingFile);
        }
        if (!traceFile.empty())
        {
            trace.Write(traceFile);
            std::printf("trace: %zu spans in %s\n", trace.Size(), traceFile.c_str());
        }
        if (!outcome.ok)
        {
            std::fprintf(stderr, "phantora-cluster: simulation failed: %s\n",
                         outcome.failure.c_str());
            return 1;
        }
        return 0;
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "phantora-cluster: %s\n", e.what());
        return 1;
    }
}
