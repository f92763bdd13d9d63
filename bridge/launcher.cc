#include "launcher.h"

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <random>
#include <stdexcept>
#include <sys/prctl.h>
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

std::vector<std::string> RankEnvironment(const LaunchSpec& spec, int rank)
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
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [k, v] : env)
    {
        out.push_back(k + "=" + v);
    }
    return out;
}

} // namespace

Launcher::~Launcher()
{
    TerminateAll(500);
    for (const auto& [fd, s] : m_streams)
    {
        close(fd);
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
    for (int rank = 0; rank < spec.nproc; ++rank)
    {
        int out[2];
        int err[2];
        if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        {
            throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
        }
        // Build everything the child needs before fork: only async-signal-safe calls after.
        const std::vector<std::string> envStrings = RankEnvironment(spec, rank);
        std::vector<char*> envp;
        for (const auto& s : envStrings)
        {
            envp.push_back(const_cast<char*>(s.c_str()));
        }
        envp.push_back(nullptr);
        std::vector<char*> argv;
        for (const auto& a : spec.command)
        {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        const pid_t parent = getpid();

        const pid_t pid = fork();
        if (pid < 0)
        {
            throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
        }
        if (pid == 0)
        {
            // A rank must not outlive the simulation that owns its clock.
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
            {
                _exit(127);
            }
            setpgid(0, 0);
            dup2(out[1], STDOUT_FILENO);
            dup2(err[1], STDERR_FILENO);
            execvpe(argv[0], argv.data(), envp.data());
            const char* msg = "phantora-cluster: cannot execute ";
            (void)!write(STDERR_FILENO, msg, std::strlen(msg));
            (void)!write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
            (void)!write(STDERR_FILENO, ": ", 2);
            const char* why = std::strerror(errno);
            (void)!write(STDERR_FILENO, why, std::strlen(why));
            (void)!write(STDERR_FILENO, "\n", 1);
            _exit(127);
        }
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

std::vector<int> Launcher::OutputFds() const
{
    std::vector<int> fds;
    for (const auto& [fd, s] : m_streams)
    {
        fds.push_back(fd);
    }
    return fds;
}

void Launcher::Emit(Stream& s, const std::string& line)
{
    std::FILE* to = s.isStderr ? stderr : stdout;
    std::fprintf(to, "[rank %d] %s\n", s.rank, line.c_str());
    std::fflush(to);
    if (m_onLine)
    {
        m_onLine(s.rank, line);
    }
    if (s.isStderr)
    {
        auto& tail = m_procs[static_cast<std::size_t>(s.rank)].stderrTail;
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
    for (std::size_t rank = 0; rank < m_procs.size(); ++rank)
    {
        Process& p = m_procs[rank];
        if (!p.alive)
        {
            continue;
        }
        int status = 0;
        const pid_t r = waitpid(p.pid, &status, WNOHANG);
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
    for (const auto& line : m_procs.at(static_cast<std::size_t>(rank)).stderrTail)
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
    for (const auto& p : m_procs)
    {
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
