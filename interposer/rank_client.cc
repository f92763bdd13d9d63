#include "rank_client.h"

#include "device_memory.h"
#include "protocol/codec.h"
#include "sim_clock.h"

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
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

std::atomic<RankClient*> RankClient::s_connected{nullptr};
std::atomic<bool> RankClient::s_forked{false};

namespace
{
/// The calling thread's lane, owned by the client (a plain pointer: it must stay
/// usable while the process exits, after thread_local objects are gone).
thread_local void* t_lane = nullptr;
constexpr uint32_t kNoLane = UINT32_MAX;
thread_local uint32_t t_reservedLane = kNoLane;
} // namespace

bool RankClient::Configured()
{
    const char* b = std::getenv("PHANTORA_BRIDGE");
    return b && *b;
}

RankClient& RankClient::Get()
{
    if (s_forked.load(std::memory_order_relaxed))
    {
        // As with real CUDA: a forked child (a data-loader worker) cannot use the GPU.
        Fatal("CUDA or NCCL called in a process forked from a rank; only the rank itself may "
              "use the GPU");
    }
    static RankClient client;
    return client;
}

RankClient* RankClient::IfConnected()
{
    return s_connected.load(std::memory_order_acquire);
}

bool RankClient::HasLane()
{
    return t_lane != nullptr || t_reservedLane != kNoLane;
}

bool RankClient::IsFirstLane()
{
    return t_lane != nullptr && static_cast<Lane*>(t_lane)->id == 0;
}

void RankClient::AdoptLane(uint32_t lane)
{
    t_reservedLane = lane;
}

RankClient::RankClient() : m_context(1)
{
    if (!Configured())
    {
        Fatal("this program called CUDA with the phantora interposer preloaded but outside a "
              "simulation (PHANTORA_BRIDGE is not set); start it with phantora-cluster");
    }
    m_rank = EnvInt("RANK", 0);
    m_launcherPid = EnvInt("PHANTORA_LAUNCHER_PID", 0);
    m_endpoint = std::getenv("PHANTORA_BRIDGE");
    (void)ThisLane();
    SimClock::Get().SetScale(m_welcome.cpuTimeScale);
    DeviceMemory::Get().SetCapacity(m_welcome.gpuMemoryBytes);
    s_connected.store(this, std::memory_order_release);
    // A forked child (a data-loader worker) shares nothing with the bridge: its waits,
    // sleeps and threads are its own business, and ZeroMQ sockets do not survive fork.
    pthread_atfork(nullptr, nullptr,
                   []
                   {
                       s_connected.store(nullptr, std::memory_order_release);
                       s_forked.store(true, std::memory_order_relaxed);
                       t_lane = nullptr;
                       t_reservedLane = kNoLane;
                   });
}

RankClient::~RankClient()
{
    Goodbye(DeviceMemory::s_peak.load());
    // ZeroMQ joins its threads as the context closes: nothing may talk to us then.
    s_connected.store(nullptr, std::memory_order_release);
}

wire::Hello RankClient::MakeHello() const
{
    wire::Hello hello;
    const char* token = std::getenv("PHANTORA_TOKEN");
    hello.token = token ? token : "";
    hello.rank = m_rank;
    hello.worldSize = EnvInt("WORLD_SIZE", 1);
    hello.localRank = EnvInt("LOCAL_RANK", 0);
    hello.pid = getpid();
    return hello;
}

RankClient::Lane& RankClient::ThisLane()
{
    if (t_lane)
    {
        return *static_cast<Lane*>(t_lane);
    }
    auto lane = std::make_unique<Lane>();
    lane->id = t_reservedLane != kNoLane ? t_reservedLane : m_nextLane.fetch_add(1);
    lane->socket = zmq::socket_t(m_context, zmq::socket_type::dealer);
    lane->socket.set(zmq::sockopt::linger, 2000);
    lane->socket.connect(m_endpoint);
    Lane& l = *lane;
    {
        std::lock_guard lock(m_lanesMutex);
        m_lanes[l.id] = std::move(lane);
    }
    t_lane = &l;
    const uint64_t seq = l.nextSeq++;
    {
        std::lock_guard lock(m_sendMutex);
        Send(l, seq, MakeHello());
    }
    wire::Reply reply = Receive(l, seq, "hello");
    if (auto* w = std::get_if<wire::Welcome>(&reply))
    {
        if (l.id == 0 || m_welcome.gpuName.empty())
        {
            m_welcome = *w;
        }
        return l;
    }
    Fatal("the bridge did not welcome this rank");
}

void RankClient::CloseLane()
{
    if (!t_lane)
    {
        return;
    }
    const uint32_t id = static_cast<Lane*>(t_lane)->id;
    t_lane = nullptr;
    std::lock_guard lock(m_lanesMutex);
    m_lanes.erase(id);
}

void RankClient::Send(Lane& lane, uint64_t seq, wire::Request body)
{
    wire::RequestEnvelope env;
    env.seq = seq;
    env.clockNs = SimClock::Get().Now();
    env.body = std::move(body);
    env.lane = lane.id;
    env.order = m_nextOrder++;
    const std::string bytes = wire::Encode(env);
    lane.socket.send(zmq::buffer(bytes), zmq::send_flags::none);
}

wire::Reply RankClient::Receive(Lane& lane, uint64_t seq, const char* what)
{
    for (;;)
    {
        zmq::pollitem_t item{lane.socket.handle(), 0, ZMQ_POLLIN, 0};
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
        if (!lane.socket.recv(msg, zmq::recv_flags::none))
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
    Lane& l = ThisLane();
    std::lock_guard lock(m_sendMutex);
    Send(l, l.nextSeq++, std::move(body));
}

wire::Reply RankClient::Call(wire::Request body)
{
    Lane& l = ThisLane();
    const uint64_t seq = l.nextSeq++;
    const char* what = wire::RequestName(body);
    {
        std::lock_guard lock(m_sendMutex);
        Send(l, seq, std::move(body));
    }
    return Receive(l, seq, what);
}

void RankClient::Goodbye(uint64_t peakDeviceBytes)
{
    if (s_forked.load(std::memory_order_relaxed))
    {
        return; // the parent says goodbye for the rank
    }
    {
        std::lock_guard lock(m_sendMutex);
        if (m_closed)
        {
            return;
        }
        m_closed = true;
    }
    SimClock::Get().Charge();
    Post(wire::Goodbye{peakDeviceBytes});
}

} // namespace phantora::interposer
