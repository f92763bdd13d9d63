// phantora-rank: starts one rank (or a launcher of ranks, such as torchrun) against a
// bridge that runs elsewhere (phantora-cluster --serve).  It sets up the environment
// the interposer reads and starts CMD with it, so that CMD and every process it
// starts inherit it: torchrun's workers, srun's tasks, a container's entrypoint.
// It stays CMD's parent (CommandWatch): the bridge hears from it that this host is
// alive and how CMD ended, and it stops CMD when the run fails or the bridge is lost.
// Signals it gets (srun's and Kubernetes' SIGTERM, a terminal's SIGINT) go to CMD.
//
// Ranks share memory: a rank's interpreter (`python SCRIPT` or `-m MODULE`, started
// by CMD itself or by the launcher CMD is) has its rank forked from this host's fork
// server, which imported torch and the program's imports once, and stands in for it
// (libphantora_rank_fork.so, RankForkRelay); --no-fork-server execs ranks as they are.
//
// Rank identity is the launcher's: RANK/WORLD_SIZE/LOCAL_RANK (torchrun, PyTorchJob)
// are used as they are; under srun, SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID fill
// in those that are unset.
#include "cli_checks.h"
#include "launch/compile_environment.h"
#include "command_watch.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#ifndef PHANTORA_INTERPOSER_PATH
#error "PHANTORA_INTERPOSER_PATH must be defined by the build"
#endif
#ifndef PHANTORA_RANK_FORK_PATH
#error "PHANTORA_RANK_FORK_PATH must be defined by the build"
#endif
#ifndef PHANTORA_PYTHON_SUPPORT_DIR
#error "PHANTORA_PYTHON_SUPPORT_DIR must be defined by the build"
#endif

namespace
{

/// Sets \p name from \p from if \p name is unset and \p from is set.
void FillFrom(const char* name, const char* from)
{
    const char* have = std::getenv(name);
    const char* value = std::getenv(from);
    if ((!have || !*have) && value && *value)
    {
        setenv(name, value, 1);
    }
}

/// CMD's process group, for the signal handler.
volatile pid_t g_child = 0;

void Forward(int sig)
{
    if (g_child > 0)
    {
        kill(-g_child, sig);
    }
}

int EnvInt(const char* name, int fallback)
{
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

/// \p built if it exists, else \p beside (a copy of the build elsewhere: a rank image's
/// /opt/phantora), else "".
std::string Installed(const std::string& built, const std::filesystem::path& beside)
{
    if (std::filesystem::exists(built))
    {
        return built;
    }
    return std::filesystem::exists(beside) ? beside.string() : std::string();
}

/// The per-user folder of this host's fork servers' sockets: $XDG_RUNTIME_DIR/phantora,
/// or /tmp/phantora-UID.
std::string ForkServerFolder()
{
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    if (runtime && *runtime && std::filesystem::is_directory(runtime))
    {
        return std::string(runtime) + "/phantora";
    }
    return "/tmp/phantora-" + std::to_string(getuid());
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"phantora-rank: run CMD as simulated GPU ranks of a bridge started with "
                 "phantora-cluster --serve.",
                 "phantora-rank"};
    app.get_formatter()->column_width(28);
    app.footer("Examples:\n"
               "  phantora-rank --connect tcp://10.0.0.1:5555 --keys keys -- torchrun "
               "--nnodes 2 --node_rank 0 --nproc_per_node 4 train.py\n"
               "  srun phantora-rank --connect tcp://10.0.0.1:5555 --keys keys -- python "
               "train.py");
    std::string connect;
    std::string keysDir;
    std::string interposer = PHANTORA_INTERPOSER_PATH;
    std::vector<std::string> command;
    bool noForkServer = false;
    std::string forkServerPreload = "torch,torch._dynamo,+imports";
    int bridgeTimeout = EnvInt("PHANTORA_BRIDGE_TIMEOUT", 60);
    app.add_option("--connect", connect, "the bridge's endpoint (phantora-cluster --listen)")
        ->required()
        ->option_text("tcp://ADDR:PORT");
    app.add_option("--keys", keysDir, "CURVE key folder copied from the bridge's host")
        ->check(CLI::ExistingDirectory)
        ->option_text("DIR");
    app.add_option("--interposer", interposer,
                   "libphantora_interposer.so to preload (default: this build's)")
        ->check(CLI::ExistingFile)
        ->option_text("FILE");
    app.add_option("--bridge-timeout", bridgeTimeout,
                   "seconds without an answer from the bridge before CMD is stopped (default "
                   "60, or PHANTORA_BRIDGE_TIMEOUT)")
        ->check(phantora::PositiveNumber())
        ->option_text("S");
    app.add_flag("--no-fork-server", noForkServer,
                 "exec each rank's interpreter as it is; by default a `python SCRIPT` (or -m "
                 "MODULE) rank is forked from this host's fork server for the program, which "
                 "imported the framework once: the ranks share its memory");
    app.add_option("--fork-server-preload", forkServerPreload,
                   "modules the fork server imports before forking; +imports: the program's "
                   "own top-level imports (default: torch,torch._dynamo,+imports)")
        ->option_text("MODULE,...");
    app.add_option("command", command, "the program to run, after --")
        ->required()
        ->option_text("CMD ARGS...");
    CLI11_PARSE(app, argc, argv);

    FillFrom("RANK", "SLURM_PROCID");
    FillFrom("WORLD_SIZE", "SLURM_NTASKS");
    FillFrom("LOCAL_RANK", "SLURM_LOCALID");
    FillFrom("LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE");
    const char* oldPreload = std::getenv("LD_PRELOAD");
    std::string preload = oldPreload && *oldPreload ? interposer + ":" + oldPreload : interposer;
    // The relay library beside the interposer, the fork server's scripts in ../python
    // from this program, where the build's own paths are not there.
    const std::string relay =
        Installed(PHANTORA_RANK_FORK_PATH,
                  std::filesystem::path(interposer).parent_path() / "libphantora_rank_fork.so");
    const std::string server =
        Installed(PHANTORA_PYTHON_SUPPORT_DIR "/phantora_host_fork_server.py",
                  std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() /
                      "python" / "phantora_host_fork_server.py");
    if (!noForkServer && (relay.empty() || server.empty()))
    {
        std::fprintf(stderr, "phantora-rank: no %s: ranks are exec'd, not forked\n",
                     relay.empty() ? "libphantora_rank_fork.so" : "phantora_host_fork_server.py");
        noForkServer = true;
    }
    if (noForkServer)
    {
        unsetenv("PHANTORA_FORK_SERVE");
    }
    else
    {
        // First: a rank's interpreter turns into the forked rank's stand-in before the
        // interposer's constructors (or Python) do anything.
        preload = relay + ":" + preload;
        setenv("PHANTORA_FORK_SERVE", ForkServerFolder().c_str(), 1);
        setenv("PHANTORA_FORK_SERVER_SCRIPT", server.c_str(), 1);
        setenv("PHANTORA_FORK_SERVER_PRELOAD", forkServerPreload.c_str(), 1);
    }
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("PHANTORA_BRIDGE", connect.c_str(), 1);
    phantora::CommandWatch::Options watch;
    watch.endpoint = connect;
    watch.bridgeTimeout = std::chrono::seconds(bridgeTimeout);
    if (!keysDir.empty())
    {
        setenv("PHANTORA_KEYS", std::filesystem::absolute(keysDir).c_str(), 1);
        try
        {
            watch.curve = phantora::wire::LoadRankCurveKeys(keysDir);
        }
        catch (const std::exception& e)
        {
            std::fprintf(stderr, "phantora-rank: --keys %s: %s\n", keysDir.c_str(), e.what());
            return 2;
        }
    }
    else
    {
        unsetenv("PHANTORA_KEYS");
    }
    // No launcher process of ours watches this rank: the interposer gives up on a bridge
    // that never answers instead (PHANTORA_CONNECT_TIMEOUT).
    unsetenv("PHANTORA_LAUNCHER_PID");
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    watch.id = std::string(host) + ":" + std::to_string(getpid());
    setenv("PHANTORA_SUPERVISOR", watch.id.c_str(), 1);
    // The served bridge was not given the command: its ranks tell it (wire::Hello::command),
    // so host time is priced from this program's recording as in a launched run.
    std::string words;
    for (const auto& a : command)
    {
        words += (words.empty() ? "" : "\n") + a;
    }
    setenv("PHANTORA_COMMAND", words.c_str(), 1);
    // The rank claims itself when it starts (interposer/process_role.h); torch.compile's
    // driver and caches (launch/compile_environment.h; the GPU model is the bridge's, not
    // known here: the caches are this host's served runs').
    unsetenv("PHANTORA_RANK_PID");
    for (const auto& [k, v] : phantora::CompileEnvironment(PHANTORA_INTERPOSER_PATH, "served"))
    {
        setenv(k.c_str(), v.c_str(), 1);
    }
    if (const char* rank = std::getenv("RANK"); rank && *rank)
    {
        watch.rank = std::atoi(rank);
    }

    std::vector<char*> args;
    for (auto& a : command)
    {
        args.push_back(a.data());
    }
    args.push_back(nullptr);
    // The pipe is closed on a successful exec: a byte on it is exec's errno.
    int execPipe[2];
    if (pipe2(execPipe, O_CLOEXEC) != 0)
    {
        std::perror("phantora-rank: pipe");
        return 1;
    }
    const pid_t child = fork();
    if (child < 0)
    {
        std::perror("phantora-rank: fork");
        return 1;
    }
    if (child == 0)
    {
        // Its own process group: stopping CMD stops what it started too.
        setpgid(0, 0);
        close(execPipe[0]);
        execvp(args[0], args.data());
        const int err = errno;
        (void)!write(execPipe[1], &err, sizeof err);
        _exit(127);
    }
    setpgid(child, child);
    close(execPipe[1]);
    int execErrno = 0;
    if (read(execPipe[0], &execErrno, sizeof execErrno) == sizeof execErrno)
    {
        std::fprintf(stderr, "phantora-rank: cannot execute %s: %s\n", args[0],
                     std::strerror(execErrno));
        waitpid(child, nullptr, 0);
        return 127;
    }
    close(execPipe[0]);
    g_child = child;
    struct sigaction sa = {};
    sa.sa_handler = Forward;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
    {
        sigaction(sig, &sa, nullptr);
    }
    try
    {
        return phantora::CommandWatch(watch).Run(child, command.front());
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "phantora-rank: %s; stopping %s (pid %d)\n", e.what(),
                     command.front().c_str(), static_cast<int>(child));
        kill(-child, SIGKILL);
        return 1;
    }
}
