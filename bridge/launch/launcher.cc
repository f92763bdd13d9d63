#include "launcher.h"

#include "console_lines.h"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace phantora
{

namespace
{

constexpr std::size_t kTailLines = 30;

std::string DescribeStatus(int status)
{
    if (WIFEXITED(status))
    {
        return fmt::format("exited with status {}", WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status))
    {
        return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
    }
    return fmt::format("ended with wait status {}", status);
}

/// The environment of rank \p rank: ours, with the launcher's variables set over it.
/// The kernel's range of ports for outgoing connections (ip_local_port_range).
std::pair<int, int> EphemeralPorts()
{
    int low = 32768;
    int high = 60999;
    if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r"))
    {
        if (std::fscanf(f, "%d %d", &low, &high) != 2)
        {
            low = 32768;
            high = 60999;
        }
        std::fclose(f);
    }
    return {low, high};
}

bool LoopbackPortFree(int port)
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
    {
        throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    return free;
}

/// A TCP port on the loopback nobody listens on now, for the ranks' rendezvous.  Rank 0
/// listens on it only seconds later (after importing its framework), so it is taken
/// outside the kernel's ephemeral range: a port from that range can meanwhile become
/// the source port of any process's outgoing connection (EADDRINUSE in rank 0, seen
/// with simulations run side by side).  A random start keeps concurrent launchers apart.
int FreeLoopbackPort()
{
    const auto [ephemeralLow, ephemeralHigh] = EphemeralPorts();
    // below the ephemeral range if it leaves room there, else above it
    int first = 10000;
    int last = ephemeralLow - 1;
    if (last - first < 1000)
    {
        first = ephemeralHigh + 1;
        last = 65535;
    }
    if (last < first)
    {
        throw std::runtime_error("no loopback port outside the ephemeral range; set MASTER_PORT");
    }
    std::mt19937 rng(std::random_device{}());
    const int span = last - first + 1;
    const int start = std::uniform_int_distribution<int>(0, span - 1)(rng);
    for (int i = 0; i < span; ++i)
    {
        const int port = first + (start + i) % span;
        if (LoopbackPortFree(port))
        {
            return port;
        }
    }
    throw std::runtime_error(
        fmt::format("no free loopback port in {}-{}; set MASTER_PORT", first, last));
}

/// The launcher's variables that differ from rank to rank; the fork server has none.
constexpr const char* kPerRankVariables[] = {"RANK", "LOCAL_RANK", "GROUP_RANK"};

std::map<std::string, std::string> RankEnvironmentMap(const LaunchSpec& spec, int rank)
{
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e)
    {
        std::string kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string::npos)
        {
            env[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
    }
    const std::string preload = env.count("LD_PRELOAD") && !env["LD_PRELOAD"].empty()
                                    ? spec.interposer + ":" + env["LD_PRELOAD"]
                                    : spec.interposer;
    env["LD_PRELOAD"] = preload;
    // Each rank claims itself when it starts (interposer/process_role.h); a claim in the
    // caller's environment (phantora-cluster run from a rank) is not theirs.
    env.erase("PHANTORA_RANK_PID");
    env["RANK"] = std::to_string(rank);
    env["WORLD_SIZE"] = std::to_string(spec.nproc);
    env["LOCAL_RANK"] = std::to_string(rank % spec.gpusPerNode);
    env["LOCAL_WORLD_SIZE"] = std::to_string(std::min(spec.gpusPerNode, spec.nproc));
    env["GROUP_RANK"] = std::to_string(rank / spec.gpusPerNode);
    env["MASTER_ADDR"] = "127.0.0.1";
    if (spec.masterPort != 0)
    {
        env["MASTER_PORT"] = std::to_string(spec.masterPort);
    }
    if (!spec.foldStoreScript.empty())
    {
        env["TORCHELASTIC_USE_AGENT_STORE"] = "True";
    }
    for (const auto& [key, value] : spec.extraEnv)
    {
        env[key] = value;
    }
    if (!spec.pythonPathPrefix.empty())
    {
        const auto old = env.find("PYTHONPATH");
        env["PYTHONPATH"] = old != env.end() && !old->second.empty()
                                ? spec.pythonPathPrefix + ":" + old->second
                                : spec.pythonPathPrefix;
    }
    env["PHANTORA_BRIDGE"] = spec.bridgeEndpoint;
    env["PHANTORA_TOKEN"] = spec.token;
    env["PHANTORA_LAUNCHER_PID"] = std::to_string(getpid());
    return env;
}

std::vector<std::string> EnvironmentStrings(const std::map<std::string, std::string>& env)
{
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [k, v] : env)
    {
        out.push_back(k + "=" + v);
    }
    return out;
}

std::vector<std::string> RankEnvironment(const LaunchSpec& spec, int rank)
{
    return EnvironmentStrings(RankEnvironmentMap(spec, rank));
}

std::vector<char*> CStrings(const std::vector<std::string>& strings)
{
    std::vector<char*> out;
    for (const auto& s : strings)
    {
        out.push_back(const_cast<char*>(s.c_str()));
    }
    out.push_back(nullptr);
    return out;
}

std::array<int, 2> Pipe()
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
    {
        throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
    }
    return {fds[0], fds[1]};
}

/// Reports a failed exec on the child's stderr and ends it (async-signal-safe).
[[noreturn]] void ExecFailed(const char* program)
{
    const char* msg = "phantora-cluster: cannot execute ";
    (void)!write(STDERR_FILENO, msg, std::strlen(msg));
    (void)!write(STDERR_FILENO, program, std::strlen(program));
    (void)!write(STDERR_FILENO, ": ", 2);
    const char* why = std::strerror(errno);
    (void)!write(STDERR_FILENO, why, std::strlen(why));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
}

/// The nice value of rank processes (and of the fork server, whose ranks inherit it).
constexpr int kRankNice = 10;

/// Forks and execs \p argv with \p envp (both built before: only async-signal-safe calls
/// in the child), in its own process group, with \p outFd and \p errFd as its standard
/// output and error and \p inherited kept open across the exec; the child's pid.
pid_t Spawn(const std::vector<char*>& argv, const std::vector<char*>& envp, int outFd, int errFd,
            const std::vector<int>& inherited = {})
{
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0)
    {
        throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
    }
    if (pid == 0)
    {
        // A child must not outlive the simulation that owns its clock.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
        {
            _exit(127);
        }
        setpgid(0, 0);
        // The bridge handles every rank's requests on one thread; the ranks' threads
        // send them as they run, some paced by real time (timed waits).  On a machine
        // with fewer cores than busy rank threads, equal shares starve that one thread
        // and the requests pile up faster than it handles them (48 Megatron ranks on 2
        // cores: README).  The ranks run at a lower priority, so the bridge's thread runs
        // whenever it has work.  Only the host's scheduling changes: simulated time
        // counts the threads' own CPU time, not their waits for a core.
        setpriority(PRIO_PROCESS, 0, kRankNice);
        dup2(outFd, STDOUT_FILENO);
        dup2(errFd, STDERR_FILENO);
        for (int fd : inherited)
        {
            fcntl(fd, F_SETFD, 0);
        }
        execvpe(argv[0], argv.data(), envp.data());
        ExecFailed(argv[0]);
    }
    return pid;
}

} // namespace

Launcher::~Launcher()
{
    TerminateAll(500);
    if (m_storeHostPid > 0)
    {
        kill(m_storeHostPid, SIGKILL);
        waitpid(m_storeHostPid, nullptr, 0);
    }
    for (const auto& [fd, s] : m_streams)
    {
        close(fd);
    }
    if (m_forkServer && m_forkServer->controlFd >= 0)
    {
        close(m_forkServer->controlFd);
    }
}

void Launcher::Start(const LaunchSpec& requested)
{
    if (requested.command.empty())
    {
        throw std::runtime_error("no command to launch");
    }
    LaunchSpec spec = requested;
    if (spec.masterPort == 0 && !std::getenv("MASTER_PORT"))
    {
        spec.masterPort = FreeLoopbackPort();
    }
    m_procs.resize(static_cast<std::size_t>(spec.nproc));
    m_spec = spec;
    for (int rank : StartedRanks())
    {
        if (rank < 0 || rank >= spec.nproc)
        {
            throw std::runtime_error(
                fmt::format("rank {} to start is outside the world of {}", rank, spec.nproc));
        }
    }
    if (!spec.foldStoreScript.empty())
    {
        std::string why;
        const auto python = ParsePythonCommand(spec.command, &why);
        if (!python)
        {
            throw std::runtime_error("a folded run serves torch's c10d store with the "
                                     "program's Python, so it runs `python SCRIPT ARGS` or "
                                     "`python -m MODULE ARGS` commands only: " +
                                     why);
        }
        m_storeHostCommand = *python;
        if (!spec.forkServer)
        {
            StartStoreHost();
        }
        // else once the fork server forks the first rank (ReadControl): its import and the
        // store host's would otherwise share the cores while the ranks' connect timeout runs
    }
    m_ranksStarted = std::chrono::steady_clock::now();
    if (spec.forkServer)
    {
        std::string why;
        const auto python = ParsePythonCommand(spec.command, &why);
        if (!python)
        {
            throw std::runtime_error("the fork server runs `python SCRIPT ARGS` or `python -m "
                                     "MODULE ARGS` commands only: " +
                                     why);
        }
        StartForkServer(m_spec, *python);
        return;
    }
    StartExecd(m_spec);
}

std::vector<int> Launcher::StartedRanks() const
{
    if (!m_spec.live.empty())
    {
        return m_spec.live;
    }
    std::vector<int> all(static_cast<std::size_t>(m_spec.nproc));
    for (int rank = 0; rank < m_spec.nproc; ++rank)
    {
        all[static_cast<std::size_t>(rank)] = rank;
    }
    return all;
}

void Launcher::StartStoreHost()
{
    if (!m_storeHostCommand || m_storeHostPid > 0)
    {
        return;
    }
    const LaunchSpec& spec = m_spec;
    const PythonCommand& python = *m_storeHostCommand;
    int port = spec.masterPort;
    if (port == 0)
    {
        port = std::atoi(std::getenv("MASTER_PORT") ? std::getenv("MASTER_PORT") : "0");
    }
    // The caller's environment without the interposer: the store host is no rank.
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e)
    {
        std::string kv(*e);
        const auto eq = kv.find('=');
        if (eq != std::string::npos && kv.compare(0, eq, "LD_PRELOAD") != 0)
        {
            env[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
    }
    std::vector<std::string> args = {python.interpreter};
    args.insert(args.end(), python.options.begin(), python.options.end());
    args.insert(args.end(),
                {spec.foldStoreScript, std::to_string(port), std::to_string(spec.nproc)});
    const int devNull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    const std::vector<std::string> envStrings = EnvironmentStrings(env);
    m_storeHostPid = Spawn(CStrings(args), CStrings(envStrings), devNull, STDERR_FILENO);
    close(devNull);
}

void Launcher::StartExecd(const LaunchSpec& spec)
{
    for (int rank : StartedRanks())
    {
        const auto out = Pipe();
        const auto err = Pipe();
        const std::vector<std::string> envStrings = RankEnvironment(spec, rank);
        const pid_t pid = Spawn(CStrings(spec.command), CStrings(envStrings), out[1], err[1]);
        close(out[1]);
        close(err[1]);
        fcntl(out[0], F_SETFL, O_NONBLOCK);
        fcntl(err[0], F_SETFL, O_NONBLOCK);
        m_streams[out[0]] = Stream{rank, false, {}};
        m_streams[err[0]] = Stream{rank, true, {}};
        m_procs[static_cast<std::size_t>(rank)].pid = pid;
        m_procs[static_cast<std::size_t>(rank)].alive = true;
    }
}

void Launcher::FallBackToExec(const std::string& how)
{
    // What it said last is why (its one-line reason, or a traceback's last line).
    std::string why = "it printed no reason";
    for (auto it = m_forkServer->stderrTail.rbegin(); it != m_forkServer->stderrTail.rend(); ++it)
    {
        if (!it->empty())
        {
            why = *it;
            break;
        }
    }
    PrintWrapped(stderr, fmt::format("phantora-cluster: the fork server {} before forking the "
                                     "ranks; starting them by exec instead (--no-fork-server: "
                                     "always). It said: {}",
                                     how, why));
    std::fflush(stderr);
    // The ranks' pipes it held are closed with it: new ones for the exec'd ranks.
    for (auto it = m_streams.begin(); it != m_streams.end();)
    {
        if (it->second.rank != kForkServer)
        {
            close(it->first);
            it = m_streams.erase(it);
        }
        else
        {
            ++it;
        }
    }
    for (auto& p : m_procs)
    {
        p = Process{};
    }
    m_ranksStarted = std::chrono::steady_clock::now();
    StartStoreHost();
    StartExecd(m_spec);
}

void Launcher::StartForkServer(const LaunchSpec& spec, const PythonCommand& python)
{
    // Ranks the fork server forks are its children until it exits; then the kernel hands
    // them to the nearest subreaper, this process, so that Reap waits for them.
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    {
        throw std::runtime_error(
            fmt::format("prctl(PR_SET_CHILD_SUBREAPER): {}", std::strerror(errno)));
    }
    // Both ends of every rank's two pipes are open here until the fork server has
    // started (4 per rank): more than the usual soft limit of 1024 from 256 ranks on.
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max)
    {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
    // The fork server's environment is every rank's but for the per-rank variables;
    // each rank sets what differs (its spec entry's "env").
    std::map<std::string, std::string> serverEnv = RankEnvironmentMap(spec, 0);
    for (const char* k : kPerRankVariables)
    {
        serverEnv.erase(k);
    }
    std::vector<int> handedOn; // write ends (and the spec) the fork server inherits
    std::vector<int> ourEnds;  // read ends: streams
    nlohmann::json j;
    j["argv"] = python.program;
    j["preload"] = spec.forkServerPreload;
    j["launcher_pid"] = getpid();
    j["fallback"] = spec.forkServerFallback;
    j["ranks"] = nlohmann::json::array();
    for (int rank : StartedRanks())
    {
        const auto out = Pipe();
        const auto err = Pipe();
        nlohmann::json env = nlohmann::json::object();
        for (const auto& [k, v] : RankEnvironmentMap(spec, rank))
        {
            const auto it = serverEnv.find(k);
            if (it == serverEnv.end() || it->second != v)
            {
                env[k] = v;
            }
        }
        j["ranks"].push_back({{"rank", rank}, {"out", out[1]}, {"err", err[1]}, {"env", env}});
        handedOn.insert(handedOn.end(), {out[1], err[1]});
        fcntl(out[0], F_SETFL, O_NONBLOCK);
        fcntl(err[0], F_SETFL, O_NONBLOCK);
        m_streams[out[0]] = Stream{rank, false, {}};
        m_streams[err[0]] = Stream{rank, true, {}};
    }
    const auto control = Pipe();
    const auto serverOut = Pipe();
    const auto serverErr = Pipe();
    j["control"] = control[1];
    handedOn.push_back(control[1]);
    // The spec in a memory file: no size limit, and nothing to write while the server starts.
    const int specFd = memfd_create("phantora-fork-server-spec", MFD_CLOEXEC);
    if (specFd < 0)
    {
        throw std::runtime_error(fmt::format("memfd_create: {}", std::strerror(errno)));
    }
    const std::string text = j.dump();
    for (std::size_t done = 0; done < text.size();)
    {
        const ssize_t n = write(specFd, text.data() + done, text.size() - done);
        if (n <= 0)
        {
            throw std::runtime_error(
                fmt::format("writing the fork server's spec: {}", std::strerror(errno)));
        }
        done += static_cast<std::size_t>(n);
    }
    lseek(specFd, 0, SEEK_SET);
    handedOn.push_back(specFd);
    serverEnv["PHANTORA_FORK_SERVER_SPEC"] = std::to_string(specFd);
    // The interposer in the fork server answers device counts with this (torch caches
    // the count, and the ranks inherit it) and ends it at any other CUDA call: imports
    // such as Megatron's ask torch.cuda.is_available() (RankClient::IsForkServer).
    serverEnv["PHANTORA_FORK_SERVER_DEVICES"] = std::to_string(spec.gpusPerNode);

    // `python [OPTIONS] -c CODE SERVER`: -c leaves __main__ free for the rank's program.
    std::vector<std::string> args = {python.interpreter};
    args.insert(args.end(), python.options.begin(), python.options.end());
    args.insert(args.end(), {"-c",
                             "import sys, importlib.util as u; s = u.spec_from_file_location("
                             "'phantora_fork_server', sys.argv[1]); m = u.module_from_spec(s); "
                             "sys.modules[s.name] = m; s.loader.exec_module(m); m.main()",
                             spec.forkServerScript});
    const std::vector<std::string> envStrings = EnvironmentStrings(serverEnv);
    std::vector<char*> envp = CStrings(envStrings);
    std::vector<char*> argv = CStrings(args);
    const pid_t pid = Spawn(argv, envp, serverOut[1], serverErr[1], handedOn);
    for (int fd : handedOn)
    {
        close(fd);
    }
    close(serverOut[1]);
    close(serverErr[1]);
    for (int fd : {serverOut[0], serverErr[0], control[0]})
    {
        fcntl(fd, F_SETFL, O_NONBLOCK);
    }
    m_streams[serverOut[0]] = Stream{kForkServer, false, {}};
    m_streams[serverErr[0]] = Stream{kForkServer, true, {}};
    m_forkServer.emplace();
    m_forkServer->pid = pid;
    m_forkServer->alive = true;
    m_forkServer->controlFd = control[0];
    for (int rank : StartedRanks())
    {
        Process& p = m_procs[static_cast<std::size_t>(rank)];
        p.pid = -1; // until the control pipe names it
        p.alive = true;
    }
}

void Launcher::ReadControl()
{
    ForkServer& fs = *m_forkServer;
    char buf[4096];
    for (;;)
    {
        const ssize_t n = read(fs.controlFd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            if (n == 0 || errno != EAGAIN)
            {
                close(fs.controlFd);
                fs.controlFd = -1;
            }
            return;
        }
        fs.controlPartial.append(buf, static_cast<std::size_t>(n));
        std::size_t pos;
        while ((pos = fs.controlPartial.find('\n')) != std::string::npos)
        {
            int rank = -1;
            int pid = -1;
            if (std::sscanf(fs.controlPartial.c_str(), "%d %d", &rank, &pid) == 2 && rank >= 0 &&
                rank < static_cast<int>(m_procs.size()) && pid > 0)
            {
                m_procs[static_cast<std::size_t>(rank)].pid = pid;
                StartStoreHost();
            }
            fs.controlPartial.erase(0, pos + 1);
        }
    }
}

void Launcher::ReapForkServer(std::vector<RankExit>& exits)
{
    if (!m_forkServer || !m_forkServer->alive)
    {
        return;
    }
    ForkServer& fs = *m_forkServer;
    int status = 0;
    if (waitpid(fs.pid, &status, WNOHANG) != fs.pid)
    {
        return;
    }
    fs.alive = false;
    if (fs.controlFd >= 0)
    {
        ReadControl(); // the pids it wrote before it exited
    }
    const bool forkedNone =
        std::none_of(m_procs.begin(), m_procs.end(), [](const Process& p) { return p.pid > 0; });
    if (m_spec.forkServerFallback && forkedNone)
    {
        RelayAll(); // its last words, for the reason
        FallBackToExec(DescribeStatus(status));
        return;
    }
    for (std::size_t rank = 0; rank < m_procs.size(); ++rank)
    {
        Process& p = m_procs[rank];
        if (p.alive && p.pid <= 0)
        {
            p.alive = false;
            exits.push_back({static_cast<int>(rank), fs.pid, false,
                             fmt::format("was never started: the fork server (pid {}) {} "
                                         "before it forked the rank",
                                         fs.pid, DescribeStatus(status))});
        }
    }
}

std::vector<int> Launcher::OutputFds() const
{
    std::vector<int> fds;
    for (const auto& [fd, s] : m_streams)
    {
        fds.push_back(fd);
    }
    if (m_forkServer && m_forkServer->controlFd >= 0)
    {
        fds.push_back(m_forkServer->controlFd);
    }
    return fds;
}

void Launcher::Emit(Stream& s, const std::string& line)
{
    std::FILE* to = s.isStderr ? stderr : stdout;
    if (s.rank == kForkServer)
    {
        // Its first line names every import (and why one was left to the ranks): wrapped.
        PrintWrapped(to, "[fork server] " + line);
    }
    else
    {
        std::fprintf(to, "[rank %d] %s\n", s.rank, line.c_str());
    }
    std::fflush(to);
    if (m_onLine && s.rank != kForkServer)
    {
        m_onLine(s.rank, line);
    }
    if (s.isStderr)
    {
        auto& tail = s.rank == kForkServer ? m_forkServer->stderrTail
                                           : m_procs[static_cast<std::size_t>(s.rank)].stderrTail;
        tail.push_back(line);
        if (tail.size() > kTailLines)
        {
            tail.pop_front();
        }
    }
}

void Launcher::CloseFd(int fd)
{
    auto it = m_streams.find(fd);
    if (it != m_streams.end() && !it->second.partial.empty())
    {
        Emit(it->second, it->second.partial);
    }
    close(fd);
    m_streams.erase(fd);
}

void Launcher::Relay(int fd)
{
    if (m_forkServer && fd == m_forkServer->controlFd && fd >= 0)
    {
        ReadControl();
        return;
    }
    auto it = m_streams.find(fd);
    if (it == m_streams.end())
    {
        return;
    }
    char buf[65536];
    for (;;)
    {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0)
        {
            Stream& s = it->second;
            s.partial.append(buf, static_cast<std::size_t>(n));
            std::size_t pos;
            while ((pos = s.partial.find('\n')) != std::string::npos)
            {
                Emit(s, s.partial.substr(0, pos));
                s.partial.erase(0, pos + 1);
            }
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
        {
            CloseFd(fd);
        }
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        return;
    }
}

void Launcher::RelayAll()
{
    for (int fd : OutputFds())
    {
        Relay(fd);
    }
}

std::vector<RankExit> Launcher::Reap()
{
    std::vector<RankExit> exits;
    // First: once it is gone, the ranks it forked are this process's children.
    ReapForkServer(exits);
    for (std::size_t rank = 0; rank < m_procs.size(); ++rank)
    {
        Process& p = m_procs[rank];
        if (!p.alive || p.pid <= 0) // <= 0: not forked yet
        {
            continue;
        }
        int status = 0;
        const pid_t r = waitpid(p.pid, &status, WNOHANG);
        if (r < 0 && errno == ECHILD && m_forkServer && !m_forkServer->alive)
        {
            // Not ours though the fork server is gone: it was reaped by someone else.
            p.alive = false;
            kill(-p.pid, SIGKILL);
            exits.push_back({static_cast<int>(rank), p.pid, false,
                             "ended with an exit status this launcher cannot see"});
            continue;
        }
        if (r == p.pid)
        {
            p.alive = false;
            // The rank's group may hold children of its own (data loader workers...).
            kill(-p.pid, SIGKILL);
            exits.push_back({static_cast<int>(rank), p.pid,
                             WIFEXITED(status) && WEXITSTATUS(status) == 0,
                             DescribeStatus(status)});
        }
    }
    return exits;
}

std::string Launcher::StderrTail(int rank) const
{
    std::string out;
    const Process& p = m_procs.at(static_cast<std::size_t>(rank));
    // A rank the fork server never forked: what the fork server said is why.
    const auto& tail = p.pid <= 0 && m_forkServer ? m_forkServer->stderrTail : p.stderrTail;
    for (const auto& line : tail)
    {
        out += "    " + line + "\n";
    }
    return out;
}

int Launcher::Live() const
{
    int n = 0;
    for (const auto& p : m_procs)
    {
        n += p.alive ? 1 : 0;
    }
    return n;
}

void Launcher::TerminateAll(int graceMs)
{
    if (m_forkServer && m_forkServer->alive)
    {
        // It has nothing to save; once it is gone the ranks it forked are ours to wait for.
        kill(m_forkServer->pid, SIGKILL);
        waitpid(m_forkServer->pid, nullptr, 0);
        m_forkServer->alive = false;
        if (m_forkServer->controlFd >= 0)
        {
            ReadControl();
        }
    }
    for (auto& p : m_procs)
    {
        if (p.alive && p.pid <= 0)
        {
            p.alive = false; // never forked
        }
        if (p.alive)
        {
            kill(-p.pid, SIGTERM);
            kill(p.pid, SIGTERM);
        }
    }
    for (int waited = 0; Live() > 0 && waited < graceMs; waited += 10)
    {
        Reap();
        if (Live() > 0)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    for (auto& p : m_procs)
    {
        if (p.alive)
        {
            kill(-p.pid, SIGKILL);
            kill(p.pid, SIGKILL);
            waitpid(p.pid, nullptr, 0);
            p.alive = false;
        }
    }
}

} // namespace phantora
