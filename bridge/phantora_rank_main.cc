// phantora-rank: starts one rank (or a launcher of ranks, such as torchrun) against a
// bridge that runs elsewhere (phantora-cluster --serve).  It sets up the environment
// the interposer reads, then becomes CMD (exec), so that CMD and every process it
// starts inherit it: torchrun's workers, srun's tasks, a container's entrypoint.
//
// Rank identity is the launcher's: RANK/WORLD_SIZE/LOCAL_RANK (torchrun, PyTorchJob)
// are used as they are; under srun, SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID fill
// in those that are unset.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#ifndef PHANTORA_INTERPOSER_PATH
#error "PHANTORA_INTERPOSER_PATH must be defined by the build"
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
    app.add_option("command", command, "the program to run, after --")
        ->required()
        ->option_text("CMD ARGS...");
    CLI11_PARSE(app, argc, argv);

    FillFrom("RANK", "SLURM_PROCID");
    FillFrom("WORLD_SIZE", "SLURM_NTASKS");
    FillFrom("LOCAL_RANK", "SLURM_LOCALID");
    FillFrom("LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE");
    const char* oldPreload = std::getenv("LD_PRELOAD");
    const std::string preload =
        oldPreload && *oldPreload ? interposer + ":" + oldPreload : interposer;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("PHANTORA_BRIDGE", connect.c_str(), 1);
    if (!keysDir.empty())
    {
        setenv("PHANTORA_KEYS", std::filesystem::absolute(keysDir).c_str(), 1);
    }
    else
    {
        unsetenv("PHANTORA_KEYS");
    }
    // No launcher process of ours watches this rank: the interposer gives up on a bridge
    // that never answers instead (PHANTORA_CONNECT_TIMEOUT).
    unsetenv("PHANTORA_LAUNCHER_PID");

    std::vector<char*> args;
    for (auto& a : command)
    {
        args.push_back(a.data());
    }
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "phantora-rank: cannot execute %s: %s\n", args[0], std::strerror(errno));
    return 127;
}
