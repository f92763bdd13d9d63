// The bridge's I/O: one ZeroMQ ROUTER socket the ranks' interposers talk to, the
// rank processes' output pipes and exits, all in one poll loop that feeds the
// SimulationEngine.  Each thread of a rank (a lane) has its own connection; a
// rank's requests are handed to the engine in the order the rank numbered them,
// whichever connection brought them first.
#pragma once

#include "engine/simulation_engine.h"
#include "engine/simulation_error.h"
#include "launch/launcher.h"
#include "launch/remote_supervisors.h"
#include "protocol/curve_keys.h"

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <zmq.hpp>

namespace phantora
{

struct ServerOptions
{
    std::string bindAddress{"127.0.0.1"}; ///< loopback unless told otherwise
    std::string token;                    ///< ranks must present it in Hello
    std::chrono::seconds connectTimeout{120};
    /// A full endpoint to listen on (tcp://ADDR:PORT); overrides bindAddress's
    /// ephemeral port (phantora-cluster --serve --listen).
    std::string listen;
    /// CURVE keys: set, every connection is encrypted and a peer must present the
    /// client key of the key folder (checked through ZAP, refusals are logged).
    std::optional<wire::CurveKeys> curve;
    /// The ranks are not the launcher's children (--serve): a rank that has said
    /// goodbye counts as exited, since no exit status will ever be reaped.
    bool remoteRanks{false};
    /// With remoteRanks: silence of a phantora-rank after which its host counts as lost.
    std::chrono::milliseconds heartbeatTimeout{30000};
    /// How long a rank's requests may wait for one of its order numbers that has not
    /// arrived (a request lost on the way) before the run ends naming it.  A request
    /// is in flight only between two sockets of one process and the bridge, so a real
    /// wait lasts as long as a backlog takes to drain: seconds on a loaded machine.
    std::chrono::milliseconds orderGapTimeout{60000};
    /// Requests held (all ranks together) waiting for a missing order number beyond
    /// which the run ends: the bridge's memory must not grow without bound meanwhile.
    std::size_t maxHeldRequests{2000000};
};

struct RunOutcome
{
    bool ok{false};
    std::string failure; ///< why the run ended early, naming the rank
    RunEnd end{RunEnd::Error};
    int signal{0}; ///< the signal that interrupted it (RunEnd::Interrupted)
};

class BridgeServer
{
public:
    BridgeServer(SimulationEngine& engine, ServerOptions options);

    /// The endpoint ranks connect to (bound on construction, ephemeral port).
    const std::string& Endpoint() const { return m_endpoint; }

    /// Runs until every rank has exited, or the simulation fails.
    RunOutcome Run(Launcher& launcher);

    /// Called once per turn of the poll loop (at least every 50 ms of wall time).
    void OnTurn(std::function<void()> f) { m_onTurn = std::move(f); }

private:
    void ReceiveAll();
    void OnMessage(const std::string& identity, const std::string& payload,
                   const std::string& address);
    /// A phantora-rank's heartbeat or exit report: noted and answered.
    void OnWatch(const std::string& identity, uint64_t seq, const wire::Watch& watch,
                 const std::string& address);
    /// The end of a served run: every remote rank and phantora-rank hears how it went
    /// (ranks stop waiting on a failed run; phantora-rank stops its command).
    void TellRemotes(const RunOutcome& outcome);
    void Send(int rank, uint32_t lane, const wire::ReplyEnvelope& reply);
    /// Queues \p req of \p rank and hands the engine every request now in order.
    void Deliver(int rank, wire::RequestEnvelope req);
    void SendTo(const std::string& identity, const wire::ReplyEnvelope& reply);
    void Flush();
    void DrainGoodbyes();
    /// A SIGINT or SIGTERM came: reports what the run waited on and ends it.
    [[noreturn]] void Interrupted();
    /// Answers the ZAP requests libzmq makes for each CURVE handshake.
    void AnswerZap();

    SimulationEngine& m_engine;
    ServerOptions m_options;
    zmq::context_t m_context;
    /// ZAP handler (inproc://zeromq.zap.01); bound before m_socket, only with CURVE.
    zmq::socket_t m_zap;
    zmq::socket_t m_socket;
    std::string m_endpoint;
    std::map<std::string, std::pair<int, uint32_t>> m_laneOf;     ///< zmq identity -> (rank, lane)
    std::map<std::pair<int, uint32_t>, std::string> m_identityOf; ///< (rank, lane) -> identity
    std::map<int, int> m_pidOf;                                   ///< connected rank -> pid
    /// What arrived on one lane's connection: ZeroMQ keeps a connection's messages in
    /// order, so a lane's numbers (seq) come in one by one and, when a rank waits for an
    /// order number, the lane that sent it is one whose last request came before it.
    struct LaneLog
    {
        uint64_t lastSeq{0};
        uint64_t lastOrder{0};
        const char* lastRequest{""};
        bool saidExit{false}; ///< its thread said it ended (HostEvent Exit)
    };
    std::map<std::pair<int, uint32_t>, LaneLog> m_laneLogs;
    struct Inbox
    {
        uint64_t next{0};                                ///< order number due next
        std::map<uint64_t, wire::RequestEnvelope> early; ///< arrived before their turn
        /// Since when `next` has been missing while later requests wait (early not empty).
        std::chrono::steady_clock::time_point waitingSince;
    };
    std::map<int, Inbox> m_inboxes;
    std::size_t m_held{0}; ///< requests in every inbox's early, together
    /// Ends the run when a rank has waited too long for a missing order number.
    void CheckInboxes(std::chrono::steady_clock::time_point now) const;
    /// What rank \p rank's inbox waits for and which of its lanes could have sent it.
    std::string DescribeGap(int rank, const Inbox& in,
                            std::chrono::steady_clock::time_point now) const;
    /// Every rank's inbox that waits, for a report on interruption ("" if none).
    std::string DescribeGaps(std::chrono::steady_clock::time_point now) const;
    /// Requests received from ranks' lanes (after their hello), and the host events among
    /// them by wire::HostEventKind: the request rate the bridge's one thread must keep up with.
    uint64_t m_requests{0};
    std::array<uint64_t, 6> m_hostEvents{};
    /// One line on stderr at the end of a run: how many requests came, how fast per rank,
    /// of which kinds, and the thread that sent the most.
    void ReportRequests(std::chrono::steady_clock::time_point started) const;
    std::vector<OutgoingReply> m_outbox;
    uint64_t m_rejected{0};
    uint64_t m_refusedKeys{0};
    std::function<void()> m_onTurn;
    RemoteSupervisors m_supervisors;
};

} // namespace phantora
