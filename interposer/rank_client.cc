#include "rank_client.h"

#include "call_charge.h"
#include "device_memory.h"
#include "host_time.h"
#include "lane_socket.h"
#include "process_role.h"
#include "protocol/codec.h"
#include "real_clock.h"
#include "request_boundary.h"
#include "sim_clock.h"
#include "stream_capture.h"

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <signal.h>
#include <string_view>
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

std::atomic<RankClient*> RankClient::s_connected{nullptr};
std::atomic<bool> RankClient::s_forked{false};
const char* RankClient::s_firstCall = nullptr;

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

bool RankClient::IsServedLauncher()
{
    static const bool launcher = []
    {
        const char* supervisor = std::getenv("PHANTORA_SUPERVISOR");
        const char* rank = std::getenv("RANK");
        return supervisor && *supervisor && !(rank && *rank);
    }();
    return launcher;
}

bool RankClient::IsForkServer()
{
    const char* devices = std::getenv("PHANTORA_FORK_SERVER_DEVICES");
    return devices && *devices;
}

int RankClient::DeviceCountWithoutRank()
{
    if (IsServedLauncher())
    {
        return 0;
    }
    if (IsForkServer())
    {
        return EnvInt("PHANTORA_FORK_SERVER_DEVICES", 0);
    }
    return -1;
}

RankClient& RankClient::Get(const char* call)
{
    if (s_forked.load(std::memory_order_relaxed))
    {
        // As with real CUDA: a forked child (a data-loader worker) cannot use the GPU.
        Fatal(std::string(call ? call : "CUDA or NCCL") + " called in pid " +
              std::to_string(getpid()) + " (" + ProcessRole::CommandLine() +
              "), a process forked from a rank; only the rank itself may use the GPU (a "
              "process it starts may query the device)");
    }
    // Never destroyed (see rank_client.h); the goodbye takes the destructor's place.
    if (IsServedLauncher())
    {
        Fatal("a CUDA call in a process that phantora-rank started without a RANK (a launcher "
              "such as torchrun's agent): only ranks may use the GPU; set RANK for a process "
              "that is one");
    }
    if (IsForkServer())
    {
        Fatal("phantora-cluster's fork server called CUDA or NCCL (beyond counting devices) "
              "while importing what it preloads: a module that uses the GPU when imported "
              "cannot be shared; leave it to the ranks (--fork-server-preload without it, or "
              "without +imports)");
    }
    s_firstCall = call;
    static RankClient* const client = new RankClient();
    static const struct SayGoodbye
    {
        ~SayGoodbye() { client->Goodbye(DeviceMemory::s_peak.load()); }
    } sayGoodbye;
    return *client;
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

RankClient::RankClient() : m_context(1), m_farewellContext(1)
{
    if (!Configured())
    {
        Fatal("this program called CUDA with the phantora interposer preloaded but outside a "
              "simulation (PHANTORA_BRIDGE is not set); start it with phantora-cluster");
    }
    m_rank = EnvInt("RANK", 0);
    m_launcherPid = EnvInt("PHANTORA_LAUNCHER_PID", 0);
    m_endpoint = std::getenv("PHANTORA_BRIDGE");
    m_helloTimeoutS = EnvInt("PHANTORA_CONNECT_TIMEOUT", 60);
    if (const char* keys = std::getenv("PHANTORA_KEYS"); keys && *keys)
    {
        try
        {
            m_curve = wire::LoadRankCurveKeys(keys);
        }
        catch (const std::exception& e)
        {
            Fatal(std::string("PHANTORA_KEYS: ") + e.what());
        }
    }
    (void)ThisLane();
    m_farewellSocket = Connect(m_farewellContext);
    // This machine's CPU time, where it has to be measured, stands for the recording
    // host's at the ratio of their speeds, then for the target's at [cpu] time_scale.
    SimClock::Get().SetScale(m_welcome.cpuTimeScale * m_welcome.localCpuScale);
    try
    {
        HostTime::Get().Load(m_hostTimeTable, m_readbackTable, m_welcome.cpuTimeScale);
        // loaded: the bytes are not needed again
        std::string().swap(m_hostTimeTable);
        std::string().swap(m_readbackTable);
    }
    catch (const std::exception& e)
    {
        Fatal(std::string("the bridge sent an unreadable host-time table: ") + e.what());
    }
    DeviceMemory::Get().SetCapacity(m_welcome.gpuMemoryBytes);
    s_connected.store(this, std::memory_order_release);
    ProcessRole::OnConnected(m_welcome);
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

zmq::socket_t RankClient::Connect(zmq::context_t& context)
{
    zmq::socket_t s(context, zmq::socket_type::dealer);
    // A lane's last requests must reach the bridge after its thread closed it
    // (lane_socket.h); only the goodbye's context is ever terminated.
    s.set(zmq::sockopt::linger, &context == &m_farewellContext ? kFarewellLingerMs : kLaneLingerMs);
    if (m_launcherPid == 0)
    {
        // A DEALER's send waits for a peer; with a bridge that refuses our key (or is not
        // there) the handshake never completes, so the wait must end (see Send).
        s.set(zmq::sockopt::sndtimeo, m_helloTimeoutS * 1000);
    }
    if (m_curve)
    {
        s.set(zmq::sockopt::curve_serverkey, m_curve->serverPublic);
        s.set(zmq::sockopt::curve_publickey, m_curve->clientPublic);
        s.set(zmq::sockopt::curve_secretkey, m_curve->clientSecret);
    }
    s.connect(m_endpoint);
    return s;
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
    hello.hardwareQueues = EnvInt("CUDA_DEVICE_MAX_CONNECTIONS", 0);
    if (const char* supervisor = std::getenv("PHANTORA_SUPERVISOR"))
    {
        hello.supervisor = supervisor;
    }
    if (const char* command = std::getenv("PHANTORA_COMMAND"))
    {
        hello.command = command;
    }
    if (const int claimant = ProcessRole::Claimant(); claimant != 0 && claimant != hello.pid)
    {
        hello.claimedBy = claimant;
        hello.call = s_firstCall ? s_firstCall : "a CUDA call";
        hello.processCommand = ProcessRole::CommandLine();
    }
    return hello;
}

RankClient::Lane& RankClient::ThisLane()
{
    if (t_lane)
    {
        return *static_cast<Lane*>(t_lane);
    }
    if (t_reservedLane != kNoLane)
    {
        // Connected on this thread's behalf while it was parked (PostAs).
        std::lock_guard lock(m_lanesMutex);
        if (auto it = m_lanes.find(t_reservedLane); it != m_lanes.end())
        {
            t_lane = it->second.get();
            return *it->second;
        }
    }
    auto lane = std::make_unique<Lane>();
    lane->id = t_reservedLane != kNoLane ? t_reservedLane : m_nextLane.fetch_add(1);
    lane->socket = Connect(m_context);
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
        if (w->hostTimeTableBytes > 0 || w->readbackTableBytes > 0)
        {
            m_hostTimeTable = FetchTable(l, wire::HostTable::HostTime, w->hostTimeTableBytes);
            m_readbackTable = FetchTable(l, wire::HostTable::Readbacks, w->readbackTableBytes);
        }
        return l;
    }
    Fatal("the bridge did not welcome this rank");
}

std::string RankClient::FetchTable(Lane& lane, wire::HostTable table, uint64_t bytes)
{
    if (bytes > wire::kMaxHostTableBytes)
    {
        Fatal("the bridge announced a host-time table of " + std::to_string(bytes) +
              " bytes, more than the " + std::to_string(wire::kMaxHostTableBytes) + " it may");
    }
    std::string out;
    out.reserve(bytes);
    while (out.size() < bytes)
    {
        const uint64_t seq = lane.nextSeq++;
        {
            std::lock_guard lock(m_sendMutex);
            Send(lane, seq, wire::TableChunk{table, out.size()});
        }
        wire::Reply reply = Receive(lane, seq, "the host-time tables");
        auto* data = std::get_if<wire::TableData>(&reply);
        if (!data || data->bytes.empty() || out.size() + data->bytes.size() > bytes)
        {
            Fatal("the bridge answered a host-time table chunk at byte " +
                  std::to_string(out.size()) + " of " + std::to_string(bytes) +
                  " with something else");
        }
        out += data->bytes;
    }
    return out;
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

void RankClient::ChargeCall(const wire::Request& body, Gap gap)
{
    // A call inside a recorded gap takes its launch cost out of the gap's budget, and
    // shows the clock no further: the rest of the budget is charged where the recording
    // ended the gap.
    if (gap == Gap::Inside)
    {
        if (auto inner = HostTime::Get().OnInnerCall(m_welcome.callOverheadNs))
        {
            CallCharge::SubmitsWork(*inner);
            return;
        }
    }
    // A boundary of the host-time profile ends the gap before it, and any request shows
    // the clock to the bridge: the gap's recorded host time is charged before the request
    // is stamped with the clock (host_time.h).  The call's own host time is the recorded
    // one where the recording has it, else the scenario's per-call overhead.
    std::optional<int64_t> callCost;
    if (HostTime::Get().Active() && gap == Gap::Ends)
    {
        if (auto what = BoundaryOf(body))
        {
            SimClock::Get().Advance(HostTime::Get().OnBoundary(*what));
        }
        SimClock::Get().Expose();
        callCost = HostTime::Get().TakeCallCost();
    }
    if (callCost)
    {
        CallCharge::SubmitsWork(*callCost);
    }
    else if (std::holds_alternative<wire::KernelLaunch>(body) ||
             std::holds_alternative<wire::Memcpy>(body) ||
             std::holds_alternative<wire::NcclCollective>(body) ||
             std::holds_alternative<wire::NcclP2P>(body))
    {
        CallCharge::SubmitsWork(m_welcome.callOverheadNs);
    }
}

void RankClient::Send(Lane& lane, uint64_t seq, wire::Request body, Gap gap)
{
    ChargeCall(body, gap);
    wire::RequestEnvelope env;
    env.seq = seq;
    env.clockNs = SimClock::Get().Now();
    env.body = std::move(body);
    env.lane = lane.id;
    Transmit(lane, env);
}

void RankClient::Transmit(Lane& lane, wire::RequestEnvelope& env)
{
    env.order = m_nextOrder++;
    const std::string bytes = wire::Encode(env);
    while (!lane.socket.send(zmq::buffer(bytes), zmq::send_flags::none))
    {
        // Only with a send timeout (no launcher watches the rank, see Connect).  Once
        // the bridge has answered a hello, a slow send is just a busy bridge.
        if (std::holds_alternative<wire::Hello>(env.body) && m_welcome.gpuName.empty())
        {
            Fatal("no answer from the bridge at " + m_endpoint + " within " +
                  std::to_string(m_helloTimeoutS) +
                  " s (PHANTORA_CONNECT_TIMEOUT): is phantora-cluster --serve listening there, "
                  "and are PHANTORA_KEYS's keys (phantora-rank --keys) the bridge's?");
        }
    }
}

wire::Reply RankClient::Receive(Lane& lane, uint64_t seq, const char* what)
{
    const bool isHello = std::string_view(what) == "hello";
    // The real clock: the program's clocks (and std::chrono's) answer simulated time.
    const int64_t since = RealNowNs(CLOCK_MONOTONIC);
    for (;;)
    {
        zmq::pollitem_t item{lane.socket.handle(), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(500));
        if (!(item.revents & ZMQ_POLLIN))
        {
            // The bridge lives in the launcher: if that is gone, nobody will answer.
            // Not "is it our parent": the rank's command may be a wrapper (time,
            // bash -c, a container runtime) that starts the program as its child.
            if (m_launcherPid != 0 && kill(m_launcherPid, 0) != 0 && errno == ESRCH)
            {
                Fatal(std::string("phantora-cluster went away while rank waited in ") + what);
            }
            if (isHello && m_launcherPid == 0 &&
                RealNowNs(CLOCK_MONOTONIC) - since > int64_t{m_helloTimeoutS} * 1000000000)
            {
                Fatal("no answer from the bridge at " + m_endpoint + " within " +
                      std::to_string(m_helloTimeoutS) +
                      " s (PHANTORA_CONNECT_TIMEOUT): is phantora-cluster --serve listening "
                      "there, and are PHANTORA_KEYS's keys (phantora-rank --keys) the "
                      "bridge's?");
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

void RankClient::Post(wire::Request body, Gap gap)
{
    if (StreamCapture::AnyActive() && StreamCapture::Get().Capture(body))
    {
        // Captured, not run: the program still spent the call's host time.
        ChargeCall(body, gap);
        return;
    }
    Lane& l = ThisLane();
    std::lock_guard lock(m_sendMutex);
    Send(l, l.nextSeq++, std::move(body), gap);
}

void RankClient::ChargeBoundary(const std::string& boundary)
{
    std::optional<int64_t> callCost;
    if (HostTime::Get().Active())
    {
        SimClock::Get().Advance(HostTime::Get().OnBoundary(boundary));
        SimClock::Get().Expose();
        callCost = HostTime::Get().TakeCallCost();
    }
    CallCharge::SubmitsWork(callCost.value_or(m_welcome.callOverheadNs));
}

void RankClient::PostGraph(std::vector<wire::Request> bodies, const std::string& boundary)
{
    Lane& l = ThisLane();
    ChargeBoundary(boundary);
    const int64_t clockNs = SimClock::Get().Now();
    std::lock_guard lock(m_sendMutex);
    for (wire::Request& body : bodies)
    {
        wire::RequestEnvelope env;
        env.seq = l.nextSeq++;
        env.clockNs = clockNs;
        env.body = std::move(body);
        env.lane = l.id;
        env.graphNode = true;
        Transmit(l, env);
    }
}

RankClient::Lane& RankClient::OpenLaneFor(uint32_t id, int64_t clockNs)
{
    auto lane = std::make_unique<Lane>();
    lane->id = id;
    lane->socket = Connect(m_context);
    Lane& l = *lane;
    {
        std::lock_guard lock(m_lanesMutex);
        m_lanes[id] = std::move(lane);
    }
    wire::RequestEnvelope env;
    env.seq = l.nextSeq++;
    env.clockNs = clockNs;
    env.body = MakeHello();
    env.lane = id;
    {
        std::lock_guard lock(m_sendMutex);
        Transmit(l, env);
    }
    if (!std::holds_alternative<wire::Welcome>(Receive(l, env.seq, "hello")))
    {
        Fatal("the bridge did not welcome thread " + std::to_string(id));
    }
    return l;
}

void RankClient::PostAs(uint32_t id, int64_t clockNs, wire::Request body)
{
    Lane* lane = nullptr;
    {
        std::lock_guard lock(m_lanesMutex);
        if (auto it = m_lanes.find(id); it != m_lanes.end())
        {
            lane = it->second.get();
        }
    }
    if (!lane)
    {
        lane = &OpenLaneFor(id, clockNs);
    }
    wire::RequestEnvelope env;
    env.seq = lane->nextSeq++;
    env.clockNs = clockNs;
    env.body = std::move(body);
    env.lane = id;
    std::lock_guard lock(m_sendMutex);
    Transmit(*lane, env);
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
    // The rank's own sockets stay open until the process is gone: other threads may
    // still be using them (rank_client.h), so their context cannot be closed, and
    // ZeroMQ only waits for queued messages to leave when a context closes.  The
    // goodbye goes on a socket of its own context instead.  Its hello is answered
    // only once the bridge has every earlier request of the rank (it handles them in
    // order), and closing its context waits until the goodbye itself has left.  A
    // bridge that is gone meanwhile ends the rank with a message (Receive).
    Lane farewell;
    farewell.id = m_nextLane.fetch_add(1);
    farewell.socket = std::move(m_farewellSocket);
    const uint64_t hello = farewell.nextSeq++;
    {
        std::lock_guard lock(m_sendMutex);
        Send(farewell, hello, MakeHello());
    }
    if (!std::holds_alternative<wire::Welcome>(Receive(farewell, hello, "Goodbye")))
    {
        Fatal("the bridge did not welcome this rank's goodbye");
    }
    {
        std::lock_guard lock(m_sendMutex);
        wire::Goodbye bye{peakDeviceBytes, {}};
        const HostTime::Totals host = HostTime::Get().Charged();
        bye.hostTime.ns = host.ns;
        bye.hostTime.gaps = host.gaps;
        bye.hostTime.readbacksServed = host.readbacksServed;
        bye.hostTime.readbacksZeros = host.readbacksZeros;
        Send(farewell, farewell.nextSeq++, std::move(bye));
    }
    // The rank's clock is final: its threads' host waits no longer concern the bridge
    // (and closing the context joins ZeroMQ's threads, which must not tell it either).
    s_connected.store(nullptr, std::memory_order_release);
    ProcessRole::OnGoodbye();
    farewell.socket.close();
    m_farewellContext.close();
}

} // namespace phantora::interposer

// For python/phantora_fork_server.py: a forked Python rank ends with _exit, skipping the
// interpreter's module teardown (which would copy every page the ranks share) and the C++
// static destructors (which, with no teardown before them, would destroy the framework's
// objects while its threads still use them), as multiprocessing's forked children do.  The
// goodbye those destructors would have said is said here; a later call does nothing.
extern "C" __attribute__((visibility("default"))) void phantora_interposer_goodbye()
{
    using namespace phantora::interposer;
    if (RankClient* client = RankClient::IfConnected())
    {
        client->Goodbye(DeviceMemory::s_peak.load());
    }
}
