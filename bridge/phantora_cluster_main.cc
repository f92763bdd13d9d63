// phantora-cluster: one process that owns the ns-3 simulation of the cluster, the
// bridge the ranks talk to, and the launcher that starts the ranks.
#include "bridge_server.h"
#include "cli_checks.h"
#include "console_lines.h"
#include "device_welcome.h"
#include "engine/simulation_engine.h"
#include "gpu_model/profile/program_name.h"
#include "launch/compile_environment.h"
#include "launch/launcher.h"
#include "launch/python_command.h"
#include "launch/static_cuda_runtime.h"
#include "loopback_endpoint.h"
#include "progress_line.h"
#include "protocol/device_description.h"
#include "run_report.h"
#include "scenario_loader.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <random>
#include <utility>

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
    // One line per flag: short descriptions, a name column wide enough for the longest.
    app.get_formatter()->column_width(28);
    app.footer("Example:\n  phantora-cluster --scenario scenarios/h100x8-nvlink-profiled.toml "
               "--report out.json -- python train.py\n"
               "Scenarios: scenarios/README.md; sweeps over scenario values: phantora-sweep "
               "--help.");
    std::string scenarioFile = std::string(PHANTORA_SOURCE_DIR) + "/scenarios/default.toml";
    int nproc = 0;
    int foldReplicas = 0;
    int foldStride = 0;
    std::string reportFile;
    std::string missingFile;
    std::string traceFile;
    std::vector<std::string> profiles;
    std::string bindAddress = "127.0.0.1";
    int connectTimeout = 120;
    std::string sync = "optimistic";
    std::string progress = "auto";
    double progressInterval = 2.0;
    std::vector<std::string> command;
    bool serve = false;
    std::string listen;
    std::string keysDir;
    double heartbeatTimeout = 30.0;
    double orderGapTimeout = 60.0;
    std::size_t maxHeldRequests = 2000000;
    std::string makeKeys;
    bool forkServer = false;
    // torch._dynamo: DDP and FSDP import it (and sympy with it) at their construction; left
    // to the ranks, those modules were 70 of a forked rank's 105 MB of its own memory.
    std::string forkServerPreload = "torch,torch._dynamo,+imports";
    app.set_version_flag("--version", std::string("phantora-cluster ") + PHANTORA_VERSION,
                         "print the version and exit");
    app.add_option("--scenario", scenarioFile, "cluster description (TOML; may extend others)")
        ->check(CLI::ExistingFile)
        ->option_text("FILE");
    app.add_option("--nproc", nproc, "ranks to start (default: every GPU of the scenario)")
        ->check(PositiveNumber())
        ->option_text("N");
    app.add_option("--fold", foldReplicas,
                   "run one process per model-parallel coordinate for the D data-parallel "
                   "replicas of a world of --nproc ranks (docs/folding.md)")
        ->check(PositiveNumber())
        ->option_text("D");
    app.add_option("--fold-stride", foldStride,
                   "ranks between two replicas of a coordinate (default --nproc/D: the "
                   "data-parallel dimension outermost; Megatron with PP > 1: TP x CP)")
        ->check(PositiveNumber())
        ->option_text("S");
    app.add_option("--report", reportFile, "write a JSON report of the run to FILE")
        ->option_text("FILE");
    app.add_option("--trace", traceFile, "write a Chrome/Perfetto trace (ui.perfetto.dev) to FILE")
        ->option_text("FILE");
    app.add_option("--missing", missingFile,
                   "write the ops the profile lacks to FILE (for gpu_profiler replay)")
        ->option_text("FILE");
    app.add_option("--profile", profiles,
                   "profile databases searched before the scenario's, in order")
        ->check(CLI::ExistingFile)
        ->expected(1, -1)
        ->option_text("FILE...");
    app.add_option("--progress", progress,
                   "progress line on stderr: auto (when a terminal; default), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->option_text("MODE");
    app.add_option("--progress-interval", progressInterval,
                   "seconds between progress lines (default 2)")
        ->check(PositiveNumber())
        ->option_text("S");
    app.add_option("--sync", sync, "optimistic (default: replays checkpoints) or conservative")
        ->check(CLI::IsMember({"optimistic", "conservative"}))
        ->option_text("MODE");
    app.add_option("--bind", bindAddress, "address the bridge listens on (default 127.0.0.1)")
        ->option_text("ADDR");
    app.add_option("--connect-timeout", connectTimeout,
                   "seconds a rank may take to make its first CUDA call (default 120)")
        ->check(PositiveNumber())
        ->option_text("S");
    app.add_flag("--serve", serve,
                 "run the bridge and network only; the ranks are started elsewhere by "
                 "phantora-rank (needs --nproc and --listen)");
    app.add_option("--listen", listen, "endpoint the bridge listens on with --serve")
        ->option_text("tcp://ADDR:PORT");
    app.add_option("--keys", keysDir,
                   "CURVE key folder (created if empty): encrypt connections, refuse ranks "
                   "without its client key")
        ->option_text("DIR");
    app.add_option("--make-keys", makeKeys,
                   "create a CURVE key folder (as --keys would) and exit: for launchers that "
                   "start the ranks before the bridge")
        ->option_text("DIR");
    app.add_option("--heartbeat-timeout", heartbeatTimeout,
                   "with --serve: seconds of silence from a phantora-rank after which its "
                   "ranks count as lost and the run ends (default 30)")
        ->check(PositiveNumber())
        ->option_text("S");
    app.add_option("--order-gap-timeout", orderGapTimeout,
                   "seconds a rank's requests may wait for one of its requests that has not "
                   "reached the bridge before the run ends naming it (default 60)")
        ->check(PositiveNumber())
        ->option_text("S");
    app.add_option("--max-held-requests", maxHeldRequests,
                   "requests the bridge may hold, all ranks together, while they wait for "
                   "earlier ones of their rank, before the run ends (default 2000000: a few GB)")
        ->check(PositiveNumber())
        ->option_text("N");
    bool noForkServer = false;
    auto* forkFlag = app.add_flag(
        "--fork-server", forkServer,
        "fork the ranks of a `python SCRIPT` (or -m MODULE) command from one Python process that "
        "imported the framework once, or refuse the command (default: fork such commands, falling "
        "back to exec when the fork server cannot; exec any other)");
    app.add_flag("--no-fork-server", noForkServer,
                 "exec every rank's command, even `python SCRIPT`: each imports its framework "
                 "itself and holds its own copy in memory")
        ->excludes(forkFlag);
    app.add_option("--fork-server-preload", forkServerPreload,
                   "modules the fork server imports before forking; +imports: the program's "
                   "own top-level imports (default: torch,torch._dynamo,+imports)")
        ->option_text("MODULE,...");
    app.add_option("command", command, "the program each rank runs, after --")
        ->option_text("PROGRAM ARGS...");
    CLI11_PARSE(app, argc, argv);

    if (!makeKeys.empty())
    {
        try
        {
            (void)wire::LoadOrCreateCurveKeys(makeKeys);
        }
        catch (const std::exception& e)
        {
            std::fprintf(stderr, "phantora-cluster: --make-keys %s: %s\n", makeKeys.c_str(),
                         e.what());
            return 1;
        }
        std::printf("phantora-cluster: CURVE keys in %s (every rank host needs server.pub, "
                    "client.pub and client.secret; only the bridge needs server.secret)\n",
                    makeKeys.c_str());
        return 0;
    }
    if (serve && (nproc == 0 || listen.empty()))
    {
        std::fprintf(stderr, "phantora-cluster: --serve needs --nproc N and --listen "
                             "tcp://ADDR:PORT\n");
        return 2;
    }
    // Across the network a rank must prove itself: a served run's hello carries no secret
    // and a launched run's token travels in clear text; CURVE keys do both ends' work.
    if (keysDir.empty() && (serve ? !IsLoopbackEndpoint(listen) : !IsLoopbackHost(bindAddress)))
    {
        PrintWrapped(
            stderr, fmt::format("phantora-cluster: {} {} is reachable from other hosts, and "
                                "without --keys any of them could connect as a rank, unencrypted: "
                                "give --keys DIR (made if empty; every rank host needs its "
                                "server.pub, client.pub and client.secret), or listen on 127.0.0.1",
                                serve ? "--listen" : "--bind", serve ? listen : bindAddress));
        return 2;
    }
    if (!serve && !listen.empty())
    {
        std::fprintf(stderr, "phantora-cluster: --listen is for --serve; use --bind ADDR for "
                             "a launched run\n");
        return 2;
    }
    if (forkServer && serve)
    {
        std::fprintf(stderr, "phantora-cluster: --fork-server starts ranks; with --serve "
                             "phantora-rank starts them\n");
        return 2;
    }
    if (!serve && !command.empty())
    {
        const auto program = FindProgram(command[0]);
        if (program && LinksCudaRuntimeStatically(*program))
        {
            PrintWrapped(stderr,
                         fmt::format("phantora-cluster: {} has the CUDA runtime linked into it "
                                     "(nvcc's default, -cudart static), so its CUDA calls cannot "
                                     "be simulated: rebuild it with `nvcc -cudart shared` (CMake: "
                                     "set_target_properties(TARGET PROPERTIES CUDA_RUNTIME_LIBRARY "
                                     "Shared))",
                                     program->string()));
            return 2;
        }
    }
    // Python ranks are forked unless told otherwise (8 torch ranks exec'd hold 0.38 GiB of
    // PSS each, forked 0.07: README); with a fallback to exec, so that the default never
    // refuses a program an exec'd launch would run.
    bool forkFallback = false;
    if (!forkServer && !noForkServer && !serve && !command.empty())
    {
        std::string why;
        if (ParsePythonCommand(command, &why))
        {
            forkServer = true;
            forkFallback = true;
        }
        else if (IsPythonInterpreter(command[0]))
        {
            std::fprintf(stderr, "phantora-cluster: the ranks are exec'd, not forked: %s\n",
                         why.c_str());
        }
    }
    if (forkServer && !forkFallback)
    {
        std::string why;
        if (!ParsePythonCommand(command, &why))
        {
            std::fprintf(stderr,
                         "phantora-cluster: --fork-server needs a `python SCRIPT ARGS` or "
                         "`python -m MODULE ARGS` command: %s\n",
                         why.c_str());
            return 2;
        }
    }
    // With --serve a command after -- only names the ranks' program (profile choice).
    const bool defaultProgram = command.empty() && !serve;
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
    for (const auto& p : profiles)
    {
        scenario.kernels.extraProfiles.emplace_back(p);
    }
    if (nproc == 0)
    {
        nproc = static_cast<int>(scenario.topology.gpus);
    }
    std::optional<FoldLayout> fold;
    if (foldReplicas > 1 || foldStride > 0)
    {
        if (foldReplicas == 0)
        {
            std::fprintf(stderr, "phantora-cluster: --fold-stride needs --fold D\n");
            return 2;
        }
        if (serve)
        {
            std::fprintf(stderr, "phantora-cluster: --fold starts the live ranks itself; it "
                                 "cannot be combined with --serve\n");
            return 2;
        }
        std::string why;
        if (!ParsePythonCommand(command, &why))
        {
            std::fprintf(stderr,
                         "phantora-cluster: --fold runs torch programs (`python SCRIPT ARGS` "
                         "or `python -m MODULE ARGS`), whose c10d store it serves: %s\n",
                         why.c_str());
            return 2;
        }
        if (const char* barrier = std::getenv("TORCH_DIST_INIT_BARRIER");
            barrier && std::string(barrier) == "1")
        {
            std::fprintf(stderr, "phantora-cluster: --fold: TORCH_DIST_INIT_BARRIER=1 counts "
                                 "every rank of the world into a store key, absent ones "
                                 "included; unset it (torch's default)\n");
            return 2;
        }
        if (const char* perRoot = std::getenv("TORCH_NCCL_RANKS_PER_ROOT");
            perRoot && std::atoi(perRoot) < nproc)
        {
            std::fprintf(stderr,
                         "phantora-cluster: --fold: TORCH_NCCL_RANKS_PER_ROOT=%s has "
                         "every %s-th rank make an NCCL id the others read from the "
                         "store, absent ranks included; unset it\n",
                         perRoot, perRoot);
            return 2;
        }
        try
        {
            fold.emplace(nproc, foldReplicas,
                         foldStride > 0 ? foldStride : std::max(nproc / foldReplicas, 1));
        }
        catch (const std::invalid_argument& e)
        {
            std::fprintf(stderr, "phantora-cluster: --fold %d --nproc %d: %s\n", foldReplicas,
                         nproc, e.what());
            return 2;
        }
    }
    if (scenario.kernels.profile.empty() && scenario.kernels.extraProfiles.empty() &&
        scenario.cpu.hostModel.empty() && scenario.cpu.timeScale > 0)
    {
        // Host time is the host's, whatever the GPU: a scenario that measured no GPU still
        // charges the model of the programs recorded on the GPU machines (of its GPU where
        // we have a profile of it), not this machine's CPU time.
        const std::filesystem::path profiles =
            std::filesystem::path(PHANTORA_SOURCE_DIR) / "profiles";
        for (const std::string& name : {scenario.gpu.model, std::string("H200")})
        {
            if (std::filesystem::is_regular_file(profiles / (name + ".sqlite")))
            {
                scenario.cpu.hostModel = profiles / (name + ".sqlite");
                break;
            }
        }
    }

    const auto wallStart = std::chrono::steady_clock::now();
    try
    {
        // Read before the run, so a table it cannot read stops it at once, not after the
        // simulation with no summary.
        ErrorBandTable errorBands;
        if (const auto bands =
                std::filesystem::path(PHANTORA_SOURCE_DIR) / "profiles" / "error_bands.tsv";
            std::filesystem::is_regular_file(bands))
        {
            errorBands = ErrorBandTable::Read(bands);
        }
        TraceRecorder trace;
        SimulationEngine engine(
            scenario, nproc, traceFile.empty() ? nullptr : &trace,
            sync == "optimistic" ? SyncMode::Optimistic : SyncMode::Conservative, fold);
        engine.PreferProfileProgram(profile::ProgramName(command));
        if (!serve)
        {
            engine.SetHostTime(HostTimeProfile::Prepare(engine.Kernels().Profile(), command, nproc,
                                                        scenario.cpu, scenario.workload.readback));
        }
        else
        {
            // Prepared once, for the command the first rank names: the profile's recording
            // of it, or the model (a fallback that preparing at start-up would build twice).
            engine.PrepareHostTimeAtFirstHello(
                [&engine, &scenario, nproc](const std::vector<std::string>& rankCommand)
                {
                    return HostTimeProfile::Prepare(engine.Kernels().Profile(), rankCommand, nproc,
                                                    scenario.cpu, scenario.workload.readback);
                });
        }
        ServerOptions options;
        options.bindAddress = bindAddress;
        // Remote ranks cannot be handed a token; CURVE keys authenticate them instead.
        options.token = serve ? "" : RandomToken();
        options.connectTimeout = std::chrono::seconds(connectTimeout);
        options.listen = listen;
        options.remoteRanks = serve;
        options.heartbeatTimeout =
            std::chrono::milliseconds(static_cast<int64_t>(heartbeatTimeout * 1000.0));
        options.orderGapTimeout =
            std::chrono::milliseconds(static_cast<int64_t>(orderGapTimeout * 1000.0));
        options.maxHeldRequests = maxHeldRequests;
        if (!keysDir.empty())
        {
            options.curve = wire::LoadOrCreateCurveKeys(keysDir);
        }
        BridgeServer server(engine, options);

        PrintWrapped(stdout,
                     fmt::format("phantora-cluster: {} ranks on '{}' ({}): {} GPUs, {}-level "
                                 "network",
                                 nproc, scenario.name, scenario.file.string(),
                                 scenario.topology.gpus, engine.Network().TransportName()));
        if (serve)
        {
            std::printf("phantora-cluster: serving on %s%s; waiting for %d ranks (phantora-rank "
                        "--connect %s%s -- ...)\n",
                        server.Endpoint().c_str(), options.curve ? " (CURVE)" : "", nproc,
                        server.Endpoint().c_str(),
                        options.curve ? (" --keys " + keysDir).c_str() : "");
        }
        else
        {
            std::string running = fmt::format("phantora-cluster: running{}:",
                                              defaultProgram ? " the bundled example" : "");
            for (const auto& a : command)
            {
                running += " " + a;
            }
            PrintWrapped(stdout, running);
        }
        if (fold)
        {
            PrintWrapped(stdout, fmt::format("phantora-cluster: folded: {}", fold->Describe()));
        }
        std::fflush(stdout);

        LaunchSpec spec;
        spec.command = command;
        spec.nproc = nproc;
        if (fold)
        {
            spec.live = fold->LiveRanks();
            spec.foldStoreScript =
                std::string(PHANTORA_PYTHON_SUPPORT_DIR) + "/phantora_fold_store.py";
            // python/phantora_fold_guard.py: gloo groups with absent members fail at once.
            spec.extraEnv["PHANTORA_FOLD"] = fmt::format("{} {}", fold->Replicas(), fold->Stride());
            // Over 128 ranks torch has every 128th rank of a group make an NCCL id and
            // gathers them through the store; absent ranks make none.  One id (rank 0's)
            // for any size: the simulated communicator is the same.
            spec.extraEnv["TORCH_NCCL_RANKS_PER_ROOT"] = std::to_string(nproc);
        }
        spec.gpusPerNode = static_cast<int>(scenario.topology.gpusPerNode);
        spec.interposer = PHANTORA_INTERPOSER_PATH;
        // Processes a rank starts (compile workers) answer device queries with this
        // (interposer/process_role.h), and torch.compile finds its driver and caches.
        spec.extraEnv["PHANTORA_GPU"] = wire::EncodeDeviceDescription(DeviceWelcome(scenario));
        for (auto& [k, v] : CompileEnvironment(spec.interposer, scenario.gpu.model))
        {
            spec.extraEnv[k] = v;
        }
        if (scenario.workload.moeRouting != WorkloadSpec::MoeRouting::None)
        {
            // python/sitecustomize.py loads python/phantora_moe_routing.py into every
            // Python rank; it reads these two variables.
            const bool skew = scenario.workload.moeRouting == WorkloadSpec::MoeRouting::Skew;
            spec.extraEnv["PHANTORA_MOE_ROUTING"] = skew ? "skew" : "balanced";
            spec.extraEnv["PHANTORA_MOE_SKEW"] = fmt::format("{}", scenario.workload.moeSkew);
        }
        // python/sitecustomize.py: the workload support above and the DeepSpeed guard
        // (python/phantora_deepspeed.py); it hands over to the program's own sitecustomize.
        spec.pythonPathPrefix = PHANTORA_PYTHON_SUPPORT_DIR;
        // python/phantora_missing_module.py names it when a rank lacks a module.
        spec.extraEnv["PHANTORA_PROJECT_VENV"] = PHANTORA_PROJECT_VENV;
        spec.forkServer = forkServer;
        spec.forkServerFallback = forkFallback;
        spec.forkServerScript =
            std::string(PHANTORA_PYTHON_SUPPORT_DIR) + "/phantora_fork_server.py";
        for (std::size_t at = 0; at < forkServerPreload.size();)
        {
            const std::size_t comma =
                std::min(forkServerPreload.find(',', at), forkServerPreload.size());
            if (comma > at)
            {
                spec.forkServerPreload.push_back(forkServerPreload.substr(at, comma - at));
            }
            at = comma + 1;
        }
        spec.bridgeEndpoint = server.Endpoint();
        if (!keysDir.empty())
        {
            spec.extraEnv["PHANTORA_KEYS"] = std::filesystem::absolute(keysDir).string();
        }
        spec.token = options.token;
        Launcher launcher;
        const bool showProgress =
            progress == "always" || (progress == "auto" && ProgressLine::IsTerminal(stderr));
        ProgressLine line(
            stderr, std::chrono::milliseconds(static_cast<int64_t>(progressInterval * 1000.0)));
        if (showProgress)
        {
            launcher.OnLine([&line](int rank, const std::string& l) { line.OnRankLine(rank, l); });
            server.OnTurn(
                [&]
                {
                    int64_t simulatedNs = 0;
                    for (const RankState& r : engine.Ranks())
                    {
                        simulatedNs = std::max(simulatedNs, r.clockNs);
                    }
                    line.Tick(simulatedNs, launcher.Live(), engine.Fold().LiveCount());
                });
        }
        if (!serve)
        {
            launcher.Start(spec);
        }
        const RunOutcome outcome = server.Run(launcher);

        RunInfo info;
        info.scenarioFile = scenario.file.string();
        info.scenarioName = scenario.name;
        info.command = command;
        info.ok = outcome.ok;
        info.failure = outcome.failure;
        info.end = outcome.end;
        info.gpuModel = scenario.gpu.model;
        info.errorBands = std::move(errorBands);
        info.wallTimeS =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
        // Every output is written whatever the end (what was simulated until then, marked
        // incomplete); one that cannot be written does not keep the others from being.
        bool written = true;
        auto write = [&written](const char* what, const std::function<void()>& f)
        {
            try
            {
                f();
            }
            catch (const std::exception& e)
            {
                written = false;
                std::fprintf(stderr, "phantora-cluster: the %s was not written: %s\n", what,
                             e.what());
            }
        };
        write("summary", [&] { PrintSummary(engine, info); });
        if (!reportFile.empty())
        {
            write("report", [&] { WriteJsonReport(reportFile, engine, info); });
        }
        if (!missingFile.empty())
        {
            write("missing-kernel list", [&] { engine.Kernels().WriteMissing(missingFile); });
        }
        if (!traceFile.empty())
        {
            write("trace",
                  [&]
                  {
                      if (!outcome.ok)
                      {
                          int64_t lastNs = 0;
                          for (const RankState& r : engine.Ranks())
                          {
                              lastNs = std::max(lastNs, r.clockNs);
                          }
                          trace.MarkIncomplete(RunEndName(outcome.end), outcome.failure, lastNs);
                      }
                      trace.Write(traceFile);
                      PrintWrapped(stdout,
                                   fmt::format("trace: {} spans in {}{}", trace.Size(), traceFile,
                                               outcome.ok ? "" : " (incomplete)"));
                  });
        }
        if (!outcome.ok)
        {
            std::fprintf(stderr,
                         "phantora-cluster: simulation failed: %s\nphantora-cluster: the run "
                         "ended early (%s, exit status %d); what was simulated until then is in "
                         "the summary%s, marked incomplete\n",
                         outcome.failure.c_str(), RunEndName(outcome.end),
                         ExitStatus(outcome.end, outcome.signal),
                         reportFile.empty() && traceFile.empty() ? ""
                                                                 : ", the report and the trace");
            return ExitStatus(outcome.end, outcome.signal);
        }
        return written ? 0 : 1;
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "phantora-cluster: %s\n", e.what());
        return 1;
    }
}
