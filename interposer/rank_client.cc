#include "rank_client.h"

#include "device_memory.h"
#include "protocol/codec.h"
#include "sim_clock.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace phantora::interposer
{

namespace
{

int EnvInt(const char* name, int fallback)
{
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

} // namespace

void Fatal(const std::string& message)
{
    std::fprintf(stderr, "phantora interposer (pid %d): %s\n", getpid(), message.c_str());
    std::fflush(stderr);
    std::_Exit(86);
}

bool RankClient::Configured()
{
    const char* b = std::getenv("PHANTORA_BRIDGE");
    return b && *b;
}

RankClient& RankClient::Get()
{
    static RankClient client;
    return client;
}

RankClient::RankClient() : m_context(1), m_socket(m_context, zmq::socket_type::dealer)
{
    if (!Configured())
    {
        Fatal("this program called CUDA with the phantora interposer preloaded but outside a "
              "simulation (PHANTORA_BRIDGE is not set); start it with phantora-cluster");
    }
    m_rank = EnvInt("RANK", 0);
    m_launcherPid = EnvInt("PHANTORA_LAUNCHER_PID", 0);
    m_socket.set(zmq::sockopt::linger, 2000);
    m_socket.connect(std::getenv("PHANTORA_BRIDGE"));
    wire::Hello hello;
    const char* token = std::getenv("PHANTORA_TOKEN");
    hello.token = token ? token : "";
    hello.rank = m_rank;
    hello.worldSize = EnvInt("WORLD_SIZE", 1);
    hello.localRank = EnvInt("LOCAL_RANK", 0);
    hello.pid = getpid();
    std::lock_guard lock(m_mutex);
    const uint64_t seq = m_nextSeq++;
    SendLocked(seq, hello);
    wire::Reply reply = ReceiveLocked(seq, "hello");
    if (auto* w = std::get_if<wire::Welcome>(&reply))
    {
        m_welcome = *w;
        SimClock::Get().SetScale(m_welcome.cpuTimeScale);
        DeviceMemory::Get().SetCapacity(m_welcome.gpuMemoryBytes);
        return;
    }
    Fatal("the bridge did not welcome this rank");
}

RankClient::~RankClient()
{
    Goodbye(DeviceMemory::s_peak.load());
}

void RankClient::SendLocked(uint64_t seq, wire::Request body)
{
    wire::RequestEnvelope env;
    env.seq = seq;
    env.clockNs = SimClock::Get().Now();
    env.body = std::move(body);
    const std::string bytes = wire::Encode(env);
    m_socket.send(zmq::buffer(bytes), zmq::send_flags::none);
}

wire::Reply RankClient::ReceiveLocked(uint64_t seq, const char* what)
{
    for (;;)
    {
        zmq::pollitem_t item{m_socket.handle(), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(500));
        if (!(item.revents & ZMQ_POLLIN))
        {
            // The bridge lives in the launcher: if that is gone, nobody will answer.
            if (m_launcherPid != 0 && getppid() != m_launcherPid)
            {
                Fatal(std::string("phantora-cluster went away while rank waited in ") + what);
            }
            continue;
        }
        zmq::message_t msg;
        if (!m_socket.recv(msg, zmq::recv_flags::none))
        {
            continue;
        }
        wire::ReplyEnvelope env;
        try
        {
            env = wire::DecodeReply(msg.to_string_view());
        }
        catch (const std::exception& e)
        {
            Fatal(std::string("unreadable reply from the bridge: ") + e.what());
        }
        if (auto* f = std::get_if<wire::Failure>(&env.body))
        {
            Fatal("the bridge refused " + std::string(what) + ": " + f->message);
        }
        if (env.seq != seq)
        {
            Fatal("reply " + std::to_string(env.seq) + " does not answer request " +
                  std::to_string(seq));
        }
        return env.body;
    }
}

void RankClient::Post(wire::Request body)
{
    std::lock_guard lock(m_mutex);
    SendLocked(m_nextSeq++, std::move(body));
}

wire::Reply RankClient::Call(wire::Request body)
{
    std::lock_guard lock(m_mutex);
    const uint64_t seq = m_nextSeq++;
    const char* what = wire::RequestName(body);
    SendLocked(seq, std::move(body));
    return ReceiveLocked(seq, what);
}

void RankClient::Goodbye(uint64_t peakDeviceBytes)
{
    std::lock_guard lock(m_mutex);
    if (m_closed)
    {
        return;
    }
    m_closed = true;
    SimClock::Get().Charge();
    SendLocked(m_nextSeq++, wire::Goodbye{peakDeviceBytes});
}

} // namespace phantora::interposer
