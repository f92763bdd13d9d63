#include "rank_fork_relay.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace phantora
{

namespace
{

/// The forked rank's process group, for the signal handler.
volatile pid_t g_rank = 0;

void Forward(int sig)
{
    if (g_rank > 0)
    {
        kill(-g_rank, sig);
    }
}

std::string Env(const char* name)
{
    const char* v = std::getenv(name);
    return v ? v : "";
}

/// Written with write(2): nothing of this process is buffered or hooked.
void Say(const std::string& line)
{
    const std::string text = line + "\n";
    for (std::size_t done = 0; done < text.size();)
    {
        const ssize_t n = write(2, text.data() + done, text.size() - done);
        if (n <= 0)
        {
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

std::vector<std::string> CommandLine()
{
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> out;
    for (std::size_t at = 0; at < all.size();)
    {
        const std::size_t end = all.find('\0', at);
        out.push_back(all.substr(at, end == std::string::npos ? std::string::npos : end - at));
        if (end == std::string::npos)
        {
            break;
        }
        at = end + 1;
    }
    return out;
}

std::vector<std::string> SplitCommas(const std::string& list)
{
    std::vector<std::string> out;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');)
    {
        if (!item.empty())
        {
            out.push_back(item);
        }
    }
    return out;
}

/// Every variable of this process but \p drop.
std::map<std::string, std::string> Environment(std::initializer_list<const char*> drop)
{
    std::map<std::string, std::string> out;
    for (char** e = environ; e && *e; ++e)
    {
        const char* eq = std::strchr(*e, '=');
        if (eq)
        {
            out.emplace(std::string(*e, static_cast<std::size_t>(eq - *e)), std::string(eq + 1));
        }
    }
    for (const char* k : drop)
    {
        out.erase(k);
    }
    return out;
}

std::string ReadTail(const std::string& path, std::size_t max)
{
    std::ifstream in(path, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all.size() > max ? "..." + all.substr(all.size() - max) : all;
}

/// What an exec'd interpreter would have ended with: its exit code, or death by the
/// rank's signal (no core of this stand-in).
[[noreturn]] void EndAs(int status)
{
    if (WIFSIGNALED(status))
    {
        const int sig = WTERMSIG(status);
        const rlimit noCore{0, 0};
        setrlimit(RLIMIT_CORE, &noCore);
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, nullptr);
        raise(sig);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

} // namespace

RankForkRelay::RankForkRelay(std::string dir, std::string rank, PythonCommand command)
    : m_dir(std::move(dir)), m_rank(std::move(rank)), m_command(std::move(command))
{
}

std::optional<RankForkRelay> RankForkRelay::ForThisProcess()
{
    const std::string dir = Env("PHANTORA_FORK_SERVE");
    const std::string rank = Env("RANK");
    if (dir.empty() || rank.empty() || Env("PHANTORA_FORK_SERVER_SCRIPT").empty())
    {
        return std::nullopt;
    }
    auto command = ParsePythonCommand(CommandLine());
    if (!command)
    {
        return std::nullopt; // `python -c`, a shell, a launcher: runs as it is
    }
    const auto& program = command->program;
    if (program[0] == "-m")
    {
        // torchrun's agent as `python -m torch.distributed.run` with RANK set (under srun).
        if (program[1] == "torch.distributed.run" || program[1] == "torch.distributed.launch")
        {
            return std::nullopt;
        }
    }
    else if (std::filesystem::path(program[0]).filename() == "torchrun" ||
             !std::filesystem::is_regular_file(program[0]))
    {
        return std::nullopt; // a missing script: the interpreter says so, as without us
    }
    return RankForkRelay(dir, rank, std::move(*command));
}

std::string RankForkRelay::Key() const
{
    std::error_code ec;
    std::string key = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    key += '\0' + m_command.interpreter;
    for (const auto& o : m_command.options)
    {
        key += '\0' + o;
    }
    const auto& program = m_command.program;
    key += '\0' + (program[0] == "-m" ? "-m " + program[1]
                                      : std::filesystem::weakly_canonical(program[0], ec).string());
    for (const char* k :
         {"PHANTORA_FORK_SERVER_PRELOAD", "PHANTORA_FORK_SERVER_SCRIPT", "PHANTORA_BRIDGE",
          "PHANTORA_KEYS", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"})
    {
        key += '\0' + Env(k);
    }
    key += '\0' + std::filesystem::read_symlink("/proc/self/ns/net", ec).string();
    key += '\0' + std::filesystem::current_path(ec).string(); // -m and relative imports
    std::uint64_t h = 1469598103934665603ull;                 // FNV-1a
    for (unsigned char c : key)
    {
        h = (h ^ c) * 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

int RankForkRelay::Connect() const
{
    const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0)
    {
        Fail(std::string("socket: ") + std::strerror(errno));
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, m_socket.c_str(), m_socket.size() + 1);
    if (connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    {
        close(sock);
        return -1;
    }
    return sock;
}

void RankForkRelay::StartServer() const
{
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0)
    {
        Fail(std::string("pipe: ") + std::strerror(errno));
    }
    // The server's environment: this rank's, less what makes a process a rank (or a
    // stand-in).  PHANTORA_FORK_SERVER_DEVICES makes the interposer answer device counts
    // and refuse any other CUDA call while the server imports (RankClient::IsForkServer).
    auto env = Environment({"PHANTORA_FORK_SERVE", "PHANTORA_SUPERVISOR", "RANK", "LOCAL_RANK",
                            "GROUP_RANK", "ROLE_RANK", "TORCHELASTIC_ERROR_FILE"});
    const std::string localWorld = Env("LOCAL_WORLD_SIZE");
    env["PHANTORA_FORK_SERVER_DEVICES"] = localWorld.empty() ? "1" : localWorld;
    std::vector<std::string> program = m_command.program;
    if (program[0] != "-m")
    {
        program[0] = std::filesystem::absolute(program[0]).string();
    }
    const char* idle = std::getenv("PHANTORA_FORK_SERVER_IDLE");
    env["PHANTORA_HOST_FORK_SERVER"] = nlohmann::json{
        {"listen", m_socket},
        {"ready", ready[1]},
        {"lock", m_lock},
        {"log", m_log},
        {"argv", program},
        {"preload", SplitCommas(Env("PHANTORA_FORK_SERVER_PRELOAD"))},
        {"idle", idle && *idle ? std::atof(idle)
                               : 10.0}}.dump();
    std::vector<std::string> envStrings;
    for (const auto& [k, v] : env)
    {
        envStrings.push_back(k + "=" + v);
    }
    std::vector<std::string> args = {m_command.interpreter};
    args.insert(args.end(), m_command.options.begin(), m_command.options.end());
    args.insert(args.end(),
                {"-c",
                 "import sys, importlib.util as u; s = u.spec_from_file_location("
                 "'phantora_host_fork_server', sys.argv[1]); m = u.module_from_spec(s); "
                 "sys.modules[s.name] = m; s.loader.exec_module(m); m.main()",
                 Env("PHANTORA_FORK_SERVER_SCRIPT")});
    std::vector<char*> argv;
    for (auto& a : args)
    {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : envStrings)
    {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);

    const pid_t child = fork();
    if (child < 0)
    {
        Fail(std::string("fork: ") + std::strerror(errno));
    }
    if (child == 0)
    {
        // A session of its own, and not our child: no launcher's signal to its group,
        // and no wait for it, reaches the server; it outlives the rank that started it.
        setsid();
        if (fork() != 0)
        {
            _exit(0);
        }
        const int log = open(m_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (log < 0 || null < 0)
        {
            _exit(127);
        }
        dup2(null, 0);
        dup2(log, 1);
        dup2(log, 2);
        fcntl(ready[1], F_SETFD, 0);
        execvpe(argv[0], argv.data(), envp.data());
        dprintf(2, "cannot execute %s: %s\n", argv[0], std::strerror(errno));
        _exit(127);
    }
    close(ready[1]);
    waitpid(child, nullptr, 0);
    char line[16] = {};
    ssize_t n;
    while ((n = read(ready[0], line, sizeof line - 1)) < 0 && errno == EINTR)
    {
    }
    close(ready[0]);
    if (n <= 0 || std::strncmp(line, "ready", 5) != 0)
    {
        Fail("this host's fork server for " + m_command.program[0] + " did not start; its log " +
             m_log + " says:\n" + ReadTail(m_log, 4000));
    }
}

void RankForkRelay::SendRequest(int sock) const
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
    {
        Fail(std::string("getcwd: ") + std::strerror(errno));
    }
    // The rank's own processes (a Python it runs) are not ranks to fork.
    const std::string text = nlohmann::json{{"argv", m_command.program},
                                            {"cwd", cwd},
                                            {"env", Environment({"PHANTORA_FORK_SERVE"})}}
                                 .dump();
    int fds[3];
    for (int fd = 0; fd < 3; ++fd)
    {
        fds[fd] = fcntl(fd, F_GETFD) >= 0 ? fd : open("/dev/null", O_RDWR | O_CLOEXEC);
    }
    iovec iov{const_cast<char*>(text.data()), text.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(c), fds, sizeof fds);
    ssize_t n;
    while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    {
    }
    if (n != static_cast<ssize_t>(text.size()))
    {
        Fail(std::string("sending the rank to this host's fork server (") + m_socket +
             "): " + std::strerror(errno));
    }
}

void RankForkRelay::Run()
{
    // The socket folder: ours alone (another user's ranks must not be forked by, nor
    // fork, ours).
    if (mkdir(m_dir.c_str(), 0700) != 0 && errno != EEXIST)
    {
        Fail("cannot create " + m_dir + ": " + std::strerror(errno));
    }
    struct stat st
    {
    };
    if (lstat(m_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077) != 0)
    {
        Fail(m_dir + " is not a folder of this user's alone (mode 0700); remove it, or run "
                     "phantora-rank --no-fork-server");
    }
    const std::string base = m_dir + "/fork-" + Key();
    m_socket = base + ".sock";
    m_log = base + ".log";
    if (m_socket.size() >= sizeof(sockaddr_un::sun_path))
    {
        Fail("the socket path " + m_socket + " is too long; set XDG_RUNTIME_DIR shorter");
    }
    // One rank at a time finds or starts the server: the others wait here while the
    // first one's server imports.
    m_lock = base + ".lock";
    const std::string& lockPath = m_lock;
    int lock = -1;
    for (;;)
    {
        lock = open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (lock < 0 || flock(lock, LOCK_EX) != 0)
        {
            Fail("cannot lock " + lockPath + ": " + std::strerror(errno));
        }
        // A server that ended idle removed the file we waited on: lock the new one.
        struct stat held
        {
        }, named{};
        if (fstat(lock, &held) == 0 && stat(lockPath.c_str(), &named) == 0 &&
            held.st_ino == named.st_ino && held.st_dev == named.st_dev)
        {
            break;
        }
        close(lock);
    }
    int sock = Connect();
    if (sock < 0)
    {
        StartServer();
        sock = Connect();
        if (sock < 0)
        {
            Fail("this host's fork server listens on " + m_socket +
                 " but refuses: " + std::strerror(errno) + "; its log: " + m_log);
        }
    }
    close(lock);
    SendRequest(sock);

    // Signals for the rank go to it from now on.
    struct sigaction sa = {};
    sa.sa_handler = Forward;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    std::string server = "?";
    char buf[4096];
    for (;;)
    {
        const ssize_t n = recv(sock, buf, sizeof buf - 1, 0);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            Fail("this host's fork server (pid " + server + ", " + m_socket +
                 ") ended before rank " + m_rank + " did" +
                 (g_rank > 0 ? " (pid " + std::to_string(g_rank) + ")" : std::string()) +
                 "; its log: " + m_log);
        }
        buf[n] = '\0';
        std::istringstream in(buf);
        std::string word;
        in >> word;
        if (word == "forked")
        {
            pid_t pid = 0;
            in >> pid >> server;
            std::string imported;
            std::getline(in, imported);
            g_rank = pid;
            for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
            {
                sigaction(sig, &sa, nullptr);
            }
            Say("[phantora] rank " + m_rank + " (pid " + std::to_string(getpid()) +
                ") forked as pid " + std::to_string(pid) + " by this host's fork server (pid " +
                server + ":" + imported + ")");
        }
        else if (word == "exit")
        {
            int status = 0;
            in >> status;
            EndAs(status);
        }
    }
}

void RankForkRelay::Fail(const std::string& what) const
{
    Say("phantora-rank: rank " + m_rank + ": " + what);
    if (g_rank > 0)
    {
        kill(-g_rank, SIGKILL);
    }
    _exit(1);
}

} // namespace phantora
