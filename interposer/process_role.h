// Which process this is: the rank, or a process the rank (or a wrapper) started that is no
// rank.  A rank starts helpers beside it: Inductor's compile workers (subprocess.Popen of
// a Python script), Triton's compiler and its `gcc`/`ptxas` runs, `python -c` probes,
// data-loader workers.  They inherit the rank's environment, and so this library and RANK,
// but only the rank's own process may connect as the rank.
//
// The rank is the process that claimed it: at load, before the program runs (and before
// Python copies the environment into os.environ, which its subprocesses inherit), a process
// that would connect as a rank and finds no PHANTORA_RANK_PID sets it to its own pid.  Exec
// keeps the pid (still the rank); a fork or a spawn gives a child another pid, with the
// claim inherited: the child is a helper.  A forked rank of a fork server
// (python/phantora_fork_server.py) sets the claim to its own pid before the program runs.
//
// A helper answers device queries (count, properties, attributes, versions, NVML basics)
// itself, from the scenario's GPU the launcher puts in PHANTORA_GPU
// (protocol/device_description.h), without connecting.  Any other call connects with the
// claim named (wire::Hello::claimedBy): the bridge ends the run naming the process and the
// call when the rank is connected already, and otherwise takes it as the rank (the program
// a wrapper shell started as its child, the shell having claimed the rank at its load).
#pragma once

#include "protocol/messages.h"

#include <string>

namespace phantora::interposer
{

class ProcessRole
{
public:
    /// The library's constructor: claims the rank for this process if it would be one and
    /// no process claimed it yet.
    static void ClaimAtLoad();
    /// The pid that claimed the rank (PHANTORA_RANK_PID), 0 if none.
    static int Claimant();
    /// True in a process that did not claim the rank and is not connected as it.
    static bool IsHelper();
    /// True where device queries are answered here, without connecting: a helper, or the
    /// fork server when the launcher gave it the GPU.
    static bool AnswersLocally();
    /// The scenario's GPU from PHANTORA_GPU; ends the process naming it and \p call if
    /// the variable is missing or unreadable.
    static const wire::Welcome& LocalDevice(const char* call);
    /// Once connected as the rank: the claim is this process's (a wrapper's child took
    /// it over), and PHANTORA_GPU describes the Welcome's GPU for the processes it starts
    /// (a rank started by phantora-rank gets none from a launcher); those that got an
    /// environment copied before (os.environ) read it from a file named by the rank's pid
    /// ($TMPDIR/phantora-gpu-UID-PID, removed at the goodbye).
    static void OnConnected(const wire::Welcome& welcome);
    /// The rank said goodbye: the description it left for its helpers goes.
    static void OnGoodbye();
    /// This process's command line, its words separated by ' ' (for messages).
    static std::string CommandLine();
};

} // namespace phantora::interposer
