// A rank's interpreter that phantora-rank's launcher exec'd (torchrun's worker, srun's
// task), turned into a stand-in for a rank forked from this host's fork server
// (python/phantora_host_fork_server.py): it runs in libphantora_rank_fork.so's
// constructor, before Python starts, so the exec'd process never imports torch.  The
// launcher still sees one process per rank: this one, with the rank's stdio (passed to
// the fork server), the signals it gets forwarded to the rank, and the rank's exit status
// (or its death by the same signal) as its own.
#pragma once

#include "python_command.h"

#include <optional>
#include <string>

namespace phantora
{

class RankForkRelay
{
public:
    /// The relay for this process when it is a rank to fork: phantora-rank asked for it
    /// (PHANTORA_FORK_SERVE, the per-user folder of the sockets), RANK is set, and the
    /// command is `python SCRIPT` or `python -m MODULE` but not torchrun itself.
    static std::optional<RankForkRelay> ForThisProcess();

    /// Has the rank forked (starting the fork server first if this host has none for the
    /// program) and ends as the rank ends.  Exits with a message naming the fork server
    /// when it cannot be started or ends before the rank.
    [[noreturn]] void Run();

private:
    RankForkRelay(std::string dir, std::string rank, PythonCommand command);

    /// What selects one fork server: interpreter, options, program, what it preloads,
    /// the bridge, the environment that shapes imports, the network namespace.
    std::string Key() const;
    /// A connected socket, or -1.
    int Connect() const;
    /// Starts the fork server in a session of its own and waits until it listens.
    void StartServer() const;
    void SendRequest(int sock) const;
    [[noreturn]] void Fail(const std::string& what) const;

    std::string m_dir;
    std::string m_rank;
    PythonCommand m_command;
    std::string m_socket;
    std::string m_log;
    std::string m_lock;
};

} // namespace phantora
