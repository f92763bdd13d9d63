// The rank's connection to the bridge.  Opened at the first intercepted CUDA/NCCL
// call, so that helper processes that inherit LD_PRELOAD but never touch the GPU
// (shells, compilers) stay invisible.
//
// Every thread that talks to the bridge is a "lane" with its own ZeroMQ DEALER
// socket (ZeroMQ sockets must not be shared between threads), so a thread waiting
// for its answer never holds up another thread's calls, and each answer reaches the
// thread that asked.  Messages of different sockets can overtake each other on the
// way, so every request carries a per-rank order number taken when it is sent; the
// bridge handles a rank's requests in that order.  A request that happens after
// another in the program (same thread, or handed over through a lock) therefore
// reaches the bridge after it.
//
// The client is never destroyed: while the process exits, after static objects are
// gone, other threads (a store server's event loop, a watchdog) may still wake and
// talk to the bridge on their sockets.  The rank says goodbye where the client's
// static destructor used to run (see Goodbye).
#pragma once

#include "fatal.h"
#include "protocol/curve_keys.h"
#include "protocol/messages.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <zmq.hpp>

namespace phantora::interposer
{

class RankClient
{
public:
    /// The connected client; the first call connects and says hello.  A rank that
    /// cannot reach its bridge cannot produce a meaningful result: it exits with a
    /// message instead of running on with made-up answers.
    /// \p call: the hook asking, named in the hello of a process that did not claim the
    /// rank (process_role.h), so that the bridge can name it if it refuses it.
    static RankClient& Get(const char* call = nullptr);
    /// True when this process was started for simulation (PHANTORA_BRIDGE is set).
    static bool Configured();
    /// True in a launcher that phantora-rank started (torchrun's agent: PHANTORA_SUPERVISOR
    /// set, RANK not): it is no rank, so it sees no GPU (device counts answer 0) and any
    /// other CUDA call ends it; its workers, which have a RANK, are the ranks.
    static bool IsServedLauncher();
    /// True in phantora-cluster's fork server (PHANTORA_FORK_SERVER_DEVICES set, which each
    /// rank it forks unsets): it imports the framework before forking the ranks and is no
    /// rank, so it must never connect (each forked child would share its connection).
    /// Device counts answer the scenario's GPUs per node, the number the bridge gives every
    /// rank (torch caches it, and the ranks inherit the cache); any other CUDA call ends it.
    /// Not cached: a forked rank is no fork server.
    static bool IsForkServer();
    /// The device count a process that is no rank answers without connecting: 0 in a
    /// served launcher, the scenario's GPUs per node in the fork server; -1 in a rank.
    static int DeviceCountWithoutRank();
    /// The client if it is connected already, else nullptr (never connects).
    static RankClient* IfConnected();

    /// Whether a call ends the host-time gap it sits in (host_time.h).  Every runtime,
    /// library and NCCL call does; a driver-API launch (Triton's cuLaunchKernel) does not:
    /// the recorder cuts no gap there, so the recorded gap around it holds its host time.
    enum class Gap
    {
        Ends,
        Inside,
    };
    /// Fire-and-forget: asynchronous GPU work.  Work on a stream being captured into a
    /// CUDA graph becomes a node of it instead (stream_capture.h), its host time charged.
    void Post(wire::Request body, Gap gap = Gap::Ends);
    /// The requests of one replay of a CUDA graph (cudaGraphLaunch), sent back to back at
    /// the caller's clock as graph nodes (wire::RequestEnvelope::graphNode): the launch's
    /// host time (\p boundary, the recorded gap or the call overhead) is charged once for
    /// all of them, as the real runtime's one launch.
    void PostGraph(std::vector<wire::Request> bodies, const std::string& boundary);
    /// Charges the host time before boundary call \p boundary and the call's own cost
    /// (the recorded one, else the call overhead), as a call that submits work.
    void ChargeBoundary(const std::string& boundary);
    /// Waits for the bridge's answer.
    wire::Reply Call(wire::Request body);
    /// Fire-and-forget on lane \p lane, stamped with \p clockNs, from another thread:
    /// only while that lane's own thread cannot send (idle_thread_watch.h).  The lane
    /// is connected (and introduced to the bridge) if its thread never talked.
    void PostAs(uint32_t lane, int64_t clockNs, wire::Request body);

    const wire::Welcome& Welcome() const { return m_welcome; }
    int Rank() const { return m_rank; }

    /// The calling thread's lane id, if it has one yet.
    static bool HasLane();
    /// A lane id for a thread about to start (see thread_handoff.cc): it will use it
    /// when it first talks to the bridge.
    uint32_t ReserveLane() { return m_nextLane.fetch_add(1); }
    /// Gives the calling thread the lane \p lane reserved for it.
    static void AdoptLane(uint32_t lane);
    /// True on the thread that connected the rank (lane 0).
    static bool IsFirstLane();
    /// The calling thread's lane id (it becomes a lane if it was not one).
    uint32_t ThisLaneId() { return ThisLane().id; }
    /// The calling thread ends: its socket is closed.
    void CloseLane();

    /// Reports the device-memory peak; returns once the bridge has it (or ends the
    /// rank if the bridge is gone).  Later requests of other threads still reach the
    /// bridge, but the rank no longer tells it about host waits.
    void Goodbye(uint64_t peakDeviceBytes);

private:
    struct Lane
    {
        uint32_t id{0};
        zmq::socket_t socket;
        uint64_t nextSeq{1};
    };

    RankClient();
    /// The calling thread's lane, connected (and introduced to the bridge) on first use.
    Lane& ThisLane();
    void Send(Lane& lane, uint64_t seq, wire::Request body, Gap gap = Gap::Ends);
    /// Charges the host time before \p body and its call cost (see Send).
    void ChargeCall(const wire::Request& body, Gap gap);
    /// Numbers \p env in the rank's order and sends it (m_sendMutex held).
    void Transmit(Lane& lane, wire::RequestEnvelope& env);
    /// Connects lane \p id for a thread that is not the caller and says hello.
    Lane& OpenLaneFor(uint32_t id, int64_t clockNs);
    wire::Reply Receive(Lane& lane, uint64_t seq, const char* what);
    /// The \p bytes of \p table, in chunks (wire::TableChunk) on \p lane, right after its Welcome.
    std::string FetchTable(Lane& lane, wire::HostTable table, uint64_t bytes);
    wire::Hello MakeHello() const;
    /// A DEALER socket of \p context connected to the bridge (CURVE if PHANTORA_KEYS).
    zmq::socket_t Connect(zmq::context_t& context);

    zmq::context_t m_context;
    /// A context of its own for the goodbye: closing it waits until the goodbye has
    /// left, which closing m_context cannot do while other threads use its sockets.
    /// Made with m_context, at connection, so that its ZeroMQ threads start (and are
    /// joined, at the goodbye) out of the program's sight.
    zmq::context_t m_farewellContext;
    zmq::socket_t m_farewellSocket;
    std::string m_endpoint;
    /// Held while a request takes its order number and is sent, so numbers and
    /// sending order agree (thread_handoff.cc relies on it, see there).
    std::mutex m_sendMutex;
    uint64_t m_nextOrder{0};
    std::atomic<uint32_t> m_nextLane{0};
    std::mutex m_lanesMutex;
    std::map<uint32_t, std::unique_ptr<Lane>> m_lanes;
    int m_rank{0};
    int m_launcherPid{0};
    /// PHANTORA_KEYS's keys: the bridge is remote and encrypted (phantora-rank --keys).
    std::optional<wire::CurveKeys> m_curve;
    /// Seconds a hello may go unanswered when no launcher watches over the rank: a
    /// bridge that refused the rank's key never answers (PHANTORA_CONNECT_TIMEOUT).
    int m_helloTimeoutS{60};
    bool m_closed{false};
    wire::Welcome m_welcome;
    /// The host-time and read-back tables the Welcome announced, until they are loaded.
    std::string m_hostTimeTable;
    std::string m_readbackTable;
    static std::atomic<RankClient*> s_connected;
    /// Set in a process forked from a connected rank: its sockets are the parent's.
    static std::atomic<bool> s_forked;
    /// The call that connected the process (Get's \p call when it connects).
    static const char* s_firstCall;
};

} // namespace phantora::interposer
