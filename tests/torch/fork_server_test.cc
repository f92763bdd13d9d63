// phantora-cluster's fork server (the default for `python SCRIPT` and `python -m MODULE`
// commands, --fork-server to insist, --no-fork-server to exec): Python ranks forked from
// one process that imported torch once (python/phantora_fork_server.py).  A forked rank
// must be indistinguishable from an exec'd one: the same simulated step times, the same
// argv, __main__ and environment, and a rank that fails or crashes ends the run naming it.
// By default a fork server that cannot fork the ranks has them exec'd, saying why.
#include "framework_checks.h"

#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace phantora::test;

namespace
{

const std::string kScenario = std::string(PHANTORA_SOURCE_DIR) + "/scenarios/h200x4-nvlink.toml";
const std::string kExample = std::string(PHANTORA_SOURCE_DIR) + "/examples/torch/train_gpt.py";
const std::string kProbe = std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/fork_server_probe.py";
const std::string kImportProbe =
    std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/fork_server_import_probe.py";
const std::string kSmallModel = "--layers 2 --width 256 --heads 4 --seq 128 --batch 4 --vocab 4096";

CommandResult Simulate(int ranks, const std::string& options, const std::string& program,
                       const std::string& scenario = kScenario, const std::string& env = "")
{
    return RunCommand(fmt::format("{} timeout 300 {} --scenario {} --nproc {} {} -- {} {} 2>&1",
                                  env.empty() ? "" : "env " + env, PHANTORA_CLUSTER, scenario,
                                  ranks, options, PHANTORA_TORCH_PYTHON, program));
}

/// The lines of \p output that match \p pattern, in order.
std::vector<std::string> Lines(const std::string& output, const std::string& pattern)
{
    std::vector<std::string> out;
    const std::regex re(pattern);
    std::istringstream in(output);
    for (std::string l; std::getline(in, l);)
    {
        if (std::regex_search(l, re))
        {
            out.push_back(l);
        }
    }
    return out;
}

} // namespace

// A forked rank starts with the clock the fork server's imports left (as an exec'd rank's
// counts its own imports); its steps are the simulated GPU's and network's, so they must
// come out the same to the printed microsecond.  CPU work is free here: measured host
// time is this machine's CPU time, which varies from run to run in either launch.
TEST(ForkServer, ForkedRanksGiveThePlainLaunchsSimulatedStepTimes)
{
    const std::string program = fmt::format("{} {} --steps 3 --mode ddp", kExample, kSmallModel);
    const std::string scenario = CpuFreeScenario(kScenario);
    const CommandResult plain = Simulate(2, "--no-fork-server", program, scenario);
    ASSERT_EQ(plain.exitCode, 0) << plain.output;
    EXPECT_EQ(plain.output.find("[fork server]"), std::string::npos) << plain.output;
    const CommandResult forked = Simulate(2, "", program, scenario); // the default
    ASSERT_EQ(forked.exitCode, 0) << forked.output;
    EXPECT_NE(forked.output.find("[fork server] imported torch"), std::string::npos)
        << forked.output;
    const std::string steps =
        R"(^\[rank \d+\] (step \d+: [0-9.]+ ms|rank \d+: mean step [0-9.]+ ms))";
    const auto plainSteps = Lines(plain.output, steps);
    const auto forkedSteps = Lines(forked.output, steps);
    // rank 0's three steps, and both ranks' means
    ASSERT_EQ(plainSteps.size(), 3u + 2u) << plain.output;
    std::vector<std::string> p;
    std::vector<std::string> f;
    const std::regex time(R"(^(\[rank \d+\] [^:]*: (mean step )?[0-9.]+ ms))");
    for (const auto& l : plainSteps)
    {
        std::smatch m;
        ASSERT_TRUE(std::regex_search(l, m, time)) << l;
        p.push_back(m[1]);
    }
    for (const auto& l : forkedSteps)
    {
        std::smatch m;
        ASSERT_TRUE(std::regex_search(l, m, time)) << l;
        f.push_back(m[1]);
    }
    std::sort(p.begin(), p.end());
    std::sort(f.begin(), f.end());
    EXPECT_EQ(p, f) << "plain:\n" << plain.output << "\nforked:\n" << forked.output;
}

// What `python SCRIPT ARGS` gives a program: argv, __file__, an empty __main__,
// the script's folder first on the path, the rank's variables; and nothing of the fork
// server's own (its spec variable) is left in the environment.
TEST(ForkServer, AForkedRankSeesWhatAnExecdRankSees)
{
    const CommandResult plain = Simulate(2, "--no-fork-server", kProbe + " --die -1");
    ASSERT_EQ(plain.exitCode, 0) << plain.output;
    const CommandResult forked = Simulate(2, "--fork-server", kProbe + " --die -1");
    ASSERT_EQ(forked.exitCode, 0) << forked.output;
    const std::string keys =
        R"(^\[rank \d+\] (argv|main_file|main_names|path0|rank_env|spec_env|sum)=)";
    auto p = Lines(plain.output, keys);
    auto f = Lines(forked.output, keys);
    ASSERT_EQ(p.size(), 2u * 7u) << plain.output;
    std::sort(p.begin(), p.end());
    std::sort(f.begin(), f.end());
    EXPECT_EQ(p, f) << "plain:\n" << plain.output << "\nforked:\n" << forked.output;
}

// As in a plain launch, the run ends either at the rank's exit status or, when its
// goodbye reaches the bridge first, at the deadlock its peer is left in; both name it.
TEST(ForkServer, AForkedRankThatRaisesIsNamedWithItsTraceback)
{
    const CommandResult r =
        Simulate(2, "--fork-server",
                 fmt::format("{} {} --steps 3 --mode ddp --fail-at-step 1 --fail-rank 1", kExample,
                             kSmallModel));
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_TRUE(std::regex_search(
        r.output, std::regex(R"(rank 1 (\(pid \d+\) exited with status 1|has finished))")))
        << r.output;
    EXPECT_TRUE(std::regex_search(
        r.output, std::regex(R"(\[rank 1\] .*RuntimeError: deliberate failure at step 1)")))
        << r.output;
}

// A crash, not an exception: the kernel's exit status is the launcher's to read, though
// the rank was the fork server's child when it started.
TEST(ForkServer, AForkedRankKilledByASignalIsNamed)
{
    const CommandResult r = Simulate(2, "--fork-server", kProbe + " --die 1");
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_TRUE(std::regex_search(
        r.output, std::regex(R"(rank 1 \(pid \d+\) was killed by signal 9 \(Killed\))")))
        << r.output;
}

TEST(ForkServer, APreloadThatFailsEndsTheRunWithTheForkServersTraceback)
{
    const CommandResult r =
        Simulate(2, "--fork-server --fork-server-preload torch,no_such_module_x", kProbe);
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("was never started: the fork server"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("ModuleNotFoundError: No module named 'no_such_module_x'"),
              std::string::npos)
        << r.output;
}

// The program's own imports are preloaded (+imports, in the default): here a module of the
// script's folder that asks torch for the GPUs when imported, as Megatron-core's modules do.
// The fork server answers the scenario's GPUs per node without CUDA (torch's own answer
// would make every forked rank a "bad fork" that may not use CUDA), and the ranks then
// use the GPU and NCCL.
TEST(ForkServer, TheProgramsImportsArePreloadedAndMayCountTheGpus)
{
    const CommandResult r = Simulate(2, "--fork-server", kImportProbe);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    ExpectTheForkServerPreloadedTheProgramsImports(r.output);
    EXPECT_EQ(Lines(r.output, R"(^\[rank \d\] at_import: available=True count=4$)").size(), 2u)
        << r.output;
    EXPECT_EQ(Lines(r.output, R"(^\[rank \d\] imported_by_the_server=True$)").size(), 2u)
        << r.output;
    EXPECT_EQ(Lines(r.output, R"(^\[rank \d\] all_reduce done, count_now=4$)").size(), 2u)
        << r.output;
}

// A module may read sys.argv when it is imported (TorchTitan's config manager takes
// `sys.argv[1:]` as a default argument): the fork server's preloaded imports see the
// program's argv, as an exec'd rank's imports do, for a script and for `-m MODULE`.
TEST(ForkServer, TheProgramsImportsSeeItsArgvAsAnExecdRanksImportsDo)
{
    const std::string env = "PYTHONPATH=" + std::string(PHANTORA_SOURCE_DIR) + "/tests/torch";
    for (const std::string& program : {kImportProbe + " --probe-arg x",
                                       std::string("-m fork_server_import_probe --probe-arg x")})
    {
        const CommandResult plain = Simulate(2, "--no-fork-server", program, kScenario, env);
        ASSERT_EQ(plain.exitCode, 0) << plain.output;
        const CommandResult forked = Simulate(2, "--fork-server", program, kScenario, env);
        ASSERT_EQ(forked.exitCode, 0) << forked.output;
        const std::string argv =
            R"(^\[rank \d\] argv_at_import=\['[^']*fork_server_import_probe\.py', '--probe-arg', 'x'\]$)";
        auto p = Lines(plain.output, argv);
        auto f = Lines(forked.output, argv);
        ASSERT_EQ(p.size(), 2u) << program << "\n" << plain.output;
        std::sort(p.begin(), p.end());
        std::sort(f.begin(), f.end());
        EXPECT_EQ(p, f) << program << "\nplain:\n"
                        << plain.output << "\nforked:\n"
                        << forked.output;
    }
}

// Without +imports the ranks import the module themselves.
TEST(ForkServer, PreloadWithoutImportsLeavesThemToTheRanks)
{
    const CommandResult r = Simulate(2, "--fork-server --fork-server-preload torch", kImportProbe);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("[fork server] imported torch ("), std::string::npos) << r.output;
    EXPECT_EQ(Lines(r.output, R"(^\[rank \d\] imported_by_the_server=False$)").size(), 2u)
        << r.output;
    EXPECT_EQ(Lines(r.output, R"(^\[rank \d\] all_reduce done, count_now=4$)").size(), 2u)
        << r.output;
}

// A preloaded module that uses the GPU would make the fork server a rank of the bridge,
// whose connection every forked rank would share: the interposer ends it, saying so.
TEST(ForkServer, APreloadedModuleThatUsesTheGpuEndsTheRunNamingIt)
{
    const CommandResult r =
        Simulate(2, "--fork-server", kImportProbe, kScenario, "FORK_PROBE_USE_CUDA=1");
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("was never started: the fork server"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("phantora-cluster's fork server called CUDA or NCCL (beyond counting "
                            "devices)"),
              std::string::npos)
        << r.output;
}

TEST(ForkServer, ACommandThatIsNotPythonIsRefused)
{
    const CommandResult r = RunCommand(fmt::format(
        "{} --scenario {} --nproc 2 --fork-server -- /bin/true 2>&1", PHANTORA_CLUSTER, kScenario));
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find("--fork-server needs a `python SCRIPT ARGS`"), std::string::npos)
        << r.output;
}

// A forked rank ends without the interpreter's teardown (python/phantora_fork_server.py,
// _finish): its atexit handlers still run, its exit status is the program's, and a process
// group the script never destroyed does not abort it (it did when the C++ static
// destructors ran with no teardown before them).
TEST(ForkServer, AForkedRankEndsAsAPythonProcessDoes)
{
    const std::string script =
        std::string(PHANTORA_SOURCE_DIR) + "/tests/torch/cpu_filled_collective.py";
    const CommandResult keep = Simulate(2, "--fork-server", script + " 1024 keep");
    ASSERT_EQ(keep.exitCode, 0) << keep.output;
    EXPECT_EQ(keep.output.find("DistBackendError"), std::string::npos) << keep.output;
    EXPECT_NE(keep.output.find("[rank 1] done"), std::string::npos) << keep.output;
    const std::string exits = WriteFile("exits.py", "import atexit, sys, torch\n"
                                                    "torch.empty(4, device='cuda')\n"
                                                    "atexit.register(print, 'atexit ran')\n"
                                                    "sys.exit(3)\n")
                                  .string();
    const CommandResult r = Simulate(1, "--fork-server", exits);
    EXPECT_NE(r.output.find("[rank 0] atexit ran"), std::string::npos) << r.output;
    EXPECT_TRUE(
        std::regex_search(r.output, std::regex(R"(rank 0 \(pid \d+\) exited with status 3)")))
        << r.output;
}

// Above TORCH_NCCL_RANKS_PER_ROOT ranks (128 by default) PyTorch creates its communicators
// with ncclCommInitRankScalable, from one unique id per root shared through its store; set
// to 2, eight forked ranks take that path (four roots).  It must train as the one-id path
// does, to the printed microsecond.
TEST(ForkServer, ScalableNcclInitAboveRanksPerRootTrainsAsTheOneIdInitDoes)
{
    const std::string program = fmt::format("{} {} --steps 2 --mode ddp", kExample, kSmallModel);
    const std::string scenario =
        CpuFreeScenario(std::string(PHANTORA_SOURCE_DIR) + "/scenarios/h200x8-nvlink.toml");
    const CommandResult scalable = Simulate(8, "--fork-server", program, scenario,
                                            "TORCH_NCCL_RANKS_PER_ROOT=2 TORCH_CPP_LOG_LEVEL=INFO");
    ASSERT_EQ(scalable.exitCode, 0) << scalable.output;
    EXPECT_EQ(Lines(scalable.output, R"(^\[rank \d\] .*Rank \d: creating NCCL communicator with )"
                                     R"(mode: blocking with scalable init\.$)")
                  .size(),
              8u)
        << scalable.output;
    const CommandResult plain =
        Simulate(8, "--fork-server", program, scenario, "TORCH_CPP_LOG_LEVEL=INFO");
    ASSERT_EQ(plain.exitCode, 0) << plain.output;
    EXPECT_TRUE(Lines(plain.output, "with scalable init").empty()) << plain.output;
    const std::string step = R"(^\[rank \d\] rank \d: mean step )";
    auto s = Lines(scalable.output, step);
    auto p = Lines(plain.output, step);
    ASSERT_EQ(s.size(), 8u) << scalable.output;
    std::sort(s.begin(), s.end());
    std::sort(p.begin(), p.end());
    EXPECT_EQ(s, p);
}

// The default launch forks the ranks only when that cannot change the program: a fork
// server that cannot (here a preloaded module uses the GPU, which would make every forked
// rank share its connection) says why, and the ranks are exec'd and run.
TEST(ForkServer, ByDefaultAForkServerThatCannotForkHasTheRanksExecd)
{
    const CommandResult r = Simulate(2, "", kImportProbe, kScenario, "FORK_PROBE_USE_CUDA=1");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const std::string flat = std::regex_replace(r.output, std::regex("\n  +"), " "); // unwrapped
    EXPECT_NE(flat.find("before forking the ranks; starting them by exec instead"),
              std::string::npos)
        << r.output;
    EXPECT_TRUE(std::regex_search(flat, std::regex("It said: .*fork server called CUDA or NCCL")))
        << r.output;
    EXPECT_EQ(Lines(r.output, R"(^\[rank \d\] imported_by_the_server=False$)").size(), 2u)
        << r.output;
    EXPECT_EQ(Lines(r.output, R"(^\[rank \d\] all_reduce done, count_now=4$)").size(), 2u)
        << r.output;
}

// A program whose imports start a thread: a forked rank would lack it, so by default the
// ranks are exec'd (and have it); --fork-server forks them anyway, with a warning.
TEST(ForkServer, ByDefaultAProgramWhoseImportsStartAThreadIsExecd)
{
    // It waits on a lock for good, as an idle prefetcher would.
    WriteFile("thread_at_import.py", "import threading\n"
                                     "t = threading.Thread(target=threading.Event().wait, "
                                     "name='prefetcher', daemon=True)\n"
                                     "t.start()\n");
    const std::string script =
        WriteFile("uses_thread.py", "import os, threading\n"
                                    "import thread_at_import\n"
                                    "import torch\n"
                                    "torch.empty(4, device='cuda')\n"
                                    "print('threads=' + ','.join(sorted(t.name for t in "
                                    "threading.enumerate())))\n")
            .string();
    const CommandResult r = Simulate(1, "", script);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const std::string flat = std::regex_replace(r.output, std::regex("\n  +"), " "); // unwrapped
    EXPECT_NE(flat.find("It said: cannot fork the ranks: the program's imports started threads "
                        "(prefetcher)"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("[rank 0] threads=MainThread,prefetcher"), std::string::npos)
        << r.output;
}

// Commands the fork server cannot start run as before, exec'd; for a Python one the
// reason is said, for any other nothing is (the bundled CUDA example, torchrun).
TEST(ForkServer, ByDefaultAPythonCommandThatCannotBeForkedIsExecdSayingWhy)
{
    const CommandResult r = RunCommand(fmt::format(
        "timeout 300 {} --scenario {} --nproc 1 -- {} -c \"import torch; torch.empty(1, "
        "device='cuda'); print('ran')\" 2>&1",
        PHANTORA_CLUSTER, kScenario, PHANTORA_TORCH_PYTHON));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("the ranks are exec'd, not forked: the interpreter option '-c'"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("[rank 0] ran"), std::string::npos) << r.output;
    const CommandResult both =
        RunCommand(fmt::format("{} --nproc 1 --fork-server --no-fork-server -- {} x.py 2>&1",
                               PHANTORA_CLUSTER, PHANTORA_TORCH_PYTHON));
    EXPECT_NE(both.exitCode, 0) << both.output;
    EXPECT_NE(both.output.find("excludes"), std::string::npos) << both.output;
}

// A rank that imports a package its Python lacks ends with the traceback and then what to
// do: the interpreter's virtual environment and the pip line.
TEST(ForkServer, AMissingPackageIsNamedWithTheVenvAndThePipLine)
{
    const std::string script =
        WriteFile("needs_a_package.py", "import torch\nimport phantora_no_such_package\n").string();
    for (const char* launch : {"", "--no-fork-server"})
    {
        const CommandResult r = Simulate(1, launch, script);
        EXPECT_NE(r.exitCode, 0) << r.output;
        EXPECT_NE(r.output.find("No module named 'phantora_no_such_package'"), std::string::npos)
            << r.output;
        EXPECT_NE(r.output.find("phantora: no module named 'phantora_no_such_package' for this "
                                "rank's Python (the virtual environment "),
                  std::string::npos)
            << launch << "\n"
            << r.output;
        EXPECT_NE(r.output.find(" -m pip install phantora_no_such_package"), std::string::npos)
            << launch << "\n"
            << r.output;
    }
}
