// Starts one process per rank, as torchrun would (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), with the interposer preloaded and
// the bridge's address and token in the environment.  Their output is relayed
// line by line with a "[rank N]" prefix; their exits are reported.
//
// With a fork server (LaunchSpec::forkServer, for `python SCRIPT` commands) one Python
// process imports the framework once and forks every rank from itself, so the ranks
// share its pages copy-on-write (python/phantora_fork_server.py).  It reports each
// rank's pid on a control pipe and exits; the launcher is a child subreaper, so the
// ranks then are its children and are waited for, named and ended as exec'd ones.
#pragma once

#include "python_command.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phantora
{

struct LaunchSpec
{
    std::vector<std::string> command;
    int nproc{1}; ///< the world size (WORLD_SIZE)
    /// The ranks to start; empty: all nproc.  Folded (docs/folding.md): the live ranks
    /// only, and the c10d store is served by a process of the launcher's (foldStore).
    std::vector<int> live;
    /// Folded: `PYTHON foldStoreScript PORT WORLD` serves the ranks' c10d store (the real
    /// torch TCPStore, which no rank hosts: rank 0 would wait for all WORLD ranks to
    /// connect), and every rank is its client (TORCHELASTIC_USE_AGENT_STORE, as under a
    /// torchrun agent).
    std::string foldStoreScript;
    int gpusPerNode{1};
    std::string interposer;     ///< path of libphantora_interposer.so
    std::string bridgeEndpoint; ///< e.g. tcp://127.0.0.1:41234
    std::string token;
    /// MASTER_PORT for the ranks' rendezvous; 0: the caller's MASTER_PORT if it has one,
    /// else a port free at launch (a fixed default would collide between concurrent runs).
    int masterPort{0};
    /// Set in every rank's environment over the caller's (the scenario's [workload]).
    std::map<std::string, std::string> extraEnv;
    /// Put before the caller's PYTHONPATH (python support the scenario asks for).
    std::string pythonPathPrefix;
    /// Fork the ranks from one Python process (the command must be one that
    /// ParsePythonCommand accepts) instead of executing the command once per rank.
    bool forkServer{false};
    /// With forkServer: a fork server that ends before it forked any rank (a preloaded
    /// module that used the GPU or started a thread, an interpreter that cannot run it)
    /// is reported on stderr and the ranks are exec'd instead.  No rank has reached the
    /// bridge then, so nothing is lost but the time it took (phantora-cluster's default).
    bool forkServerFallback{false};
    /// python/phantora_fork_server.py.
    std::string forkServerScript;
    /// Modules the fork server imports before it forks (the framework: "torch").
    std::vector<std::string> forkServerPreload;
};

struct RankExit
{
    int rank;
    int pid;
    bool clean;              ///< exit status 0
    std::string description; ///< "exited with status 1", "killed by signal 9 (Killed)"
};

class Launcher
{
public:
    Launcher() = default;
    ~Launcher();
    Launcher(const Launcher&) = delete;
    Launcher& operator=(const Launcher&) = delete;

    /// Starts every rank; throws std::runtime_error if a process cannot be created.
    void Start(const LaunchSpec& spec);

    /// File descriptors carrying rank output, to poll.
    std::vector<int> OutputFds() const;
    /// Relays what is readable on \p fd.
    void Relay(int fd);
    /// Relays everything still buffered in every pipe (before reporting a failure).
    void RelayAll();

    /// Exits that happened since the last call.
    std::vector<RankExit> Reap();

    /// The last lines a rank wrote to stderr, for failure reports.
    std::string StderrTail(int rank) const;

    /// Terminates every live rank (SIGTERM, then SIGKILL after \p graceMs) and reaps them.
    void TerminateAll(int graceMs = 2000);

    int Live() const;

    /// When the ranks were started: Start's time, or the fallback's when a fork server
    /// failed and they were exec'd after it (the bridge's connect timeout counts from it).
    std::chrono::steady_clock::time_point RanksStarted() const { return m_ranksStarted; }
    /// The fork server's pid while it runs (it imports, then forks), else -1.
    int ForkServerPid() const
    {
        return m_forkServer && m_forkServer->alive ? m_forkServer->pid : -1;
    }

    /// Called with every line a rank prints, after it is relayed (progress counts steps).
    void OnLine(std::function<void(int rank, const std::string& line)> f)
    {
        m_onLine = std::move(f);
    }

private:
    /// Stream::rank of the fork server's own output.
    static constexpr int kForkServer = -1;

    struct Stream
    {
        int rank; ///< kForkServer: the fork server's
        bool isStderr;
        std::string partial;
    };
    struct Process
    {
        int pid{-1};
        bool alive{false};
        std::deque<std::string> stderrTail;
    };

    struct ForkServer
    {
        int pid{-1};
        bool alive{false};
        int controlFd{-1};
        std::string controlPartial;
        std::deque<std::string> stderrTail;
    };

    /// One exec'd process per rank.
    void StartExecd(const LaunchSpec& spec);
    void StartForkServer(const LaunchSpec& spec, const PythonCommand& python);
    /// Folded: starts the process serving the ranks' c10d store (LaunchSpec::foldStoreScript)
    /// unless it runs; the ranks' store clients retry until it listens.
    void StartStoreHost();
    /// The ranks Start starts (LaunchSpec::live, or all).
    std::vector<int> StartedRanks() const;
    /// The fork server ended before forking a rank: say why, exec the ranks instead.
    void FallBackToExec(const std::string& how);
    /// "RANK PID" lines from the fork server's control pipe.
    void ReadControl();
    /// The fork server's exit, if it happened: ranks it never forked end with it.
    void ReapForkServer(std::vector<RankExit>& exits);
    void Emit(Stream& s, const std::string& line);
    void CloseFd(int fd);

    LaunchSpec m_spec;
    std::chrono::steady_clock::time_point m_ranksStarted{};
    std::vector<Process> m_procs;
    std::optional<ForkServer> m_forkServer;
    std::optional<PythonCommand> m_storeHostCommand; ///< folded: the store host's interpreter
    int m_storeHostPid{-1};
    std::map<int, Stream> m_streams; ///< by fd
    std::function<void(int, const std::string&)> m_onLine;
};

} // namespace phantora
