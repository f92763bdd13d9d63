#include "command_watch.h"

#include "protocol/codec.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <zmq.hpp>

namespace phantora
{

namespace
{

using Clock = std::chrono::steady_clock;
constexpr auto kHeartbeat = std::chrono::seconds(1);

} // namespace

CommandWatch::CommandWatch(Options options) : m_options(std::move(options)) {}

std::string CommandWatch::DescribeStatus(int status)
{
    if (WIFEXITED(status))
    {
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status))
    {
        const int sig = WTERMSIG(status);
        const char* name = strsignal(sig);
        return "was killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
    }
    return "ended with wait status " + std::to_string(status);
}

void CommandWatch::StopGroup(pid_t child)
{
    kill(-child, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < deadline)
    {
        if (waitpid(child, nullptr, WNOHANG) == child)
        {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Whatever is left of the group (a launcher's workers) goes too.
    kill(-child, SIGKILL);
    waitpid(child, nullptr, WNOHANG);
}

int CommandWatch::Run(pid_t child, const std::string& command)
{
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    // The last report must get out, but a bridge that is gone must not keep us.
    socket.set(zmq::sockopt::linger, 1000);
    if (m_options.curve)
    {
        socket.set(zmq::sockopt::curve_serverkey, m_options.curve->serverPublic);
        socket.set(zmq::sockopt::curve_publickey, m_options.curve->clientPublic);
        socket.set(zmq::sockopt::curve_secretkey, m_options.curve->clientSecret);
    }
    socket.connect(m_options.endpoint);

    wire::Watch watch;
    const char* token = std::getenv("PHANTORA_TOKEN");
    watch.token = token ? token : "";
    watch.id = m_options.id;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    watch.host = host;
    watch.pid = static_cast<int32_t>(getpid());
    watch.rank = m_options.rank;
    watch.commandPid = static_cast<int32_t>(child);
    watch.command = command;

    uint64_t seq = 1;
    uint64_t exitSeq = UINT64_MAX; ///< the report that carried the exit
    auto report = [&]
    {
        if (watch.exited && exitSeq == UINT64_MAX)
        {
            exitSeq = seq;
        }
        // Never blocks: with no bridge connected yet the report is simply skipped.
        const std::string bytes = wire::Encode(wire::RequestEnvelope{seq++, 0, watch});
        (void)socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    };

    auto lastAnswer = Clock::now();
    auto nextReport = Clock::now();
    bool runDone = false;
    int exitStatus = 0;
    bool exited = false;
    Clock::time_point exitAt;
    for (;;)
    {
        const auto now = Clock::now();
        if (!exited)
        {
            int status = 0;
            if (waitpid(child, &status, WNOHANG) == child)
            {
                exited = true;
                exitAt = now;
                exitStatus = WIFEXITED(status) ? WEXITSTATUS(status)
                                               : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
                watch.exited = true;
                watch.clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
                watch.exitMessage = DescribeStatus(status);
                if (runDone)
                {
                    return exitStatus;
                }
                report();
                nextReport = now + kHeartbeat;
            }
        }
        else if (now - exitAt > std::chrono::seconds(3))
        {
            // The bridge did not acknowledge the exit: it is gone or refuses us.
            return exitStatus;
        }
        if (!runDone && now >= nextReport)
        {
            report();
            nextReport = now + kHeartbeat;
        }
        if (!runDone && !exited && now - lastAnswer > m_options.bridgeTimeout)
        {
            std::fprintf(stderr,
                         "phantora-rank: no answer from the bridge at %s for %lld s: stopping %s "
                         "(pid %d)\n",
                         m_options.endpoint.c_str(),
                         static_cast<long long>(m_options.bridgeTimeout.count()), command.c_str(),
                         static_cast<int>(child));
            StopGroup(child);
            return 86;
        }

        zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
        try
        {
            zmq::poll(&item, 1, std::chrono::milliseconds(100));
        }
        catch (const zmq::error_t& e)
        {
            if (e.num() != EINTR)
            {
                throw;
            }
            continue;
        }
        zmq::message_t msg;
        while ((item.revents & ZMQ_POLLIN) && socket.recv(msg, zmq::recv_flags::dontwait))
        {
            wire::ReplyEnvelope reply;
            try
            {
                reply = wire::DecodeReply(msg.to_string_view());
            }
            catch (const std::exception& e)
            {
                std::fprintf(stderr, "phantora-rank: unreadable answer from the bridge: %s\n",
                             e.what());
                continue;
            }
            const auto* note = std::get_if<wire::SupervisorNote>(&reply.body);
            if (!note)
            {
                continue;
            }
            lastAnswer = Clock::now();
            if (exited && reply.seq >= exitSeq)
            {
                // The bridge has our exit report.
                return exitStatus;
            }
            if (note->state == wire::SupervisorNote::State::Done)
            {
                runDone = true;
            }
            else if (note->state == wire::SupervisorNote::State::Failed)
            {
                std::fprintf(stderr,
                             "phantora-rank: the simulation failed: %s\nphantora-rank: "
                             "stopping %s (pid %d)\n",
                             note->message.c_str(), command.c_str(), static_cast<int>(child));
                StopGroup(child);
                return 1;
            }
        }
    }
}

} // namespace phantora
