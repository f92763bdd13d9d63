// The bridge's I/O: one ZeroMQ ROUTER socket the ranks' interposers talk to, the
// rank processes' output pipes and exits, all in one poll loop that feeds the
// SimulationEngine.
#pragma once

#include "launcher.h"
#include "simulation_engine.h"

#include <chrono>
#include <map>
#include <string>
#include <zmq.hpp>

namespace phantora
{

struct ServerOptions
{
    std::string bindAddress{"127.0.0.1"}; ///< loopback unless told otherwise
    std::string token;                    ///< ranks must present it in Hello
    std::chrono::seconds connectTimeout{120};
};

struct RunOutcome
{
    bool ok{false};
    std::string failure; ///< why the run ended early, naming the rank
};

class BridgeServer
{
public:
    BridgeServer(SimulationEngine& engine, ServerOptions options);

    /// The endpoint ranks connect to (bound on construction, ephemeral port).
    const std::string& Endpoint() const { return m_endpoint; }

    /// Runs until every rank has exited, or the simulation fails.
    RunOutcome Run(Launcher& launcher);

private:
    void ReceiveAll();
    void OnMessage(const std::string& identity, const std::string& payload);
    void Send(int rank, const wire::ReplyEnvelope& reply);
    void SendTo(const std::string& identity, const wire::ReplyEnvelope& reply);
    void Flush();
    void DrainGoodbyes();

    SimulationEngine& m_engine;
    ServerOptions m_options;
    zmq::context_t m_context;
    zmq::socket_t m_socket;
    std::string m_endpoint;
    std::map<std::string, int> m_rankOf;     ///< zmq identity -> rank
    std::map<int, std::string> m_identityOf; ///< rank -> zmq identity
    std::vector<OutgoingReply> m_outbox;
    uint64_t m_rejected{0};
};

} // namespace phantora
