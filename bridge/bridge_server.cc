#include "bridge_server.h"

#include "protocol/codec.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <fmt/format.h>
#include <iterator>
#include <spdlog/spdlog.h>

namespace phantora
{

namespace
{

volatile std::sig_atomic_t g_interrupted = 0;
volatile std::sig_atomic_t g_dumpState = 0;

void OnSignal(int sig)
{
    g_interrupted = sig;
}

/// SIGUSR1: print the engine's state (who holds simulated time back) and go on.
void OnDumpSignal(int)
{
    g_dumpState = 1;
}

} // namespace

BridgeServer::BridgeServer(SimulationEngine& engine, ServerOptions options)
    : m_engine(engine), m_options(std::move(options)), m_context(1),
      m_supervisors(m_options.heartbeatTimeout, std::chrono::seconds(2))
{
    if (m_options.curve)
    {
        // libzmq asks the handler bound here about every CURVE peer; it must exist
        // before the socket that uses it accepts anyone.
        m_zap = zmq::socket_t(m_context, zmq::socket_type::rep);
        m_zap.set(zmq::sockopt::linger, 0);
        m_zap.bind("inproc://zeromq.zap.01");
    }
    m_socket = zmq::socket_t(m_context, zmq::socket_type::router);
    m_socket.set(zmq::sockopt::linger, 0);
    if (m_options.curve)
    {
        m_socket.set(zmq::sockopt::curve_server, true);
        m_socket.set(zmq::sockopt::curve_secretkey, m_options.curve->serverSecret);
        m_socket.set(zmq::sockopt::zap_domain, "phantora");
    }
    m_socket.bind(m_options.listen.empty() ? fmt::format("tcp://{}:*", m_options.bindAddress)
                                           : m_options.listen);
    m_endpoint = m_socket.get(zmq::sockopt::last_endpoint);
}

void BridgeServer::AnswerZap()
{
    if (!m_zap)
    {
        return;
    }
    for (;;)
    {
        // ZAP 1.0 request: version, request id, domain, address, identity, mechanism,
        // then the mechanism's credentials (CURVE: the client's 32-byte public key).
        std::vector<zmq::message_t> frames;
        zmq::message_t f;
        if (!m_zap.recv(f, zmq::recv_flags::dontwait))
        {
            return;
        }
        frames.push_back(std::move(f));
        while (frames.back().more())
        {
            zmq::message_t next;
            (void)m_zap.recv(next, zmq::recv_flags::none);
            frames.push_back(std::move(next));
        }
        const std::string version = frames.size() > 0 ? frames[0].to_string() : "";
        const std::string requestId = frames.size() > 1 ? frames[1].to_string() : "";
        const std::string address = frames.size() > 3 ? frames[3].to_string() : "?";
        const std::string mechanism = frames.size() > 5 ? frames[5].to_string() : "";
        bool allowed = false;
        if (version == "1.0" && mechanism == "CURVE" && frames.size() > 6 && frames[6].size() == 32)
        {
            char z85[41];
            zmq_z85_encode(z85, static_cast<const uint8_t*>(frames[6].data()), 32);
            allowed = m_options.curve->clientPublic == z85;
        }
        if (!allowed && m_refusedKeys++ % 100 == 0)
        {
            // A refused peer reconnects every 100 ms or so: one line, then one per 100.
            spdlog::warn("bridge: refused a connection from {}: its CURVE key is not the "
                         "client key of the run's key folder ({} refused so far)",
                         address, m_refusedKeys);
        }
        const std::string status = allowed ? "200" : "400";
        const std::string text = allowed ? "OK" : "unknown client key";
        m_zap.send(zmq::buffer(version), zmq::send_flags::sndmore);
        m_zap.send(zmq::buffer(requestId), zmq::send_flags::sndmore);
        m_zap.send(zmq::buffer(status), zmq::send_flags::sndmore);
        m_zap.send(zmq::buffer(text), zmq::send_flags::sndmore);
        m_zap.send(zmq::buffer(std::string(allowed ? "rank" : "")), zmq::send_flags::sndmore);
        m_zap.send(zmq::str_buffer(""), zmq::send_flags::none);
    }
}

void BridgeServer::SendTo(const std::string& identity, const wire::ReplyEnvelope& reply)
{
    const std::string bytes = wire::Encode(reply);
    m_socket.send(zmq::buffer(identity), zmq::send_flags::sndmore);
    m_socket.send(zmq::buffer(bytes), zmq::send_flags::none);
}

void BridgeServer::Send(int rank, uint32_t lane, const wire::ReplyEnvelope& reply)
{
    auto it = m_identityOf.find({rank, lane});
    if (it != m_identityOf.end())
    {
        SendTo(it->second, reply);
    }
}

void BridgeServer::Flush()
{
    for (const auto& o : m_outbox)
    {
        Send(o.rank, o.lane, o.reply);
    }
    m_outbox.clear();
}

void BridgeServer::OnWatch(const std::string& identity, uint64_t seq, const wire::Watch& watch,
                           const std::string& address)
{
    if (!m_options.remoteRanks || watch.token != m_options.token)
    {
        // Only a served run has phantora-ranks to hear from.
        ++m_rejected;
        spdlog::warn("bridge: ignored a phantora-rank report from {} (pid {}): {}", watch.host,
                     watch.pid,
                     m_options.remoteRanks ? "wrong token" : "this run launches its own ranks");
        return;
    }
    m_supervisors.OnWatch(watch, identity, address, std::chrono::steady_clock::now());
    if (watch.exited)
    {
        spdlog::info("bridge: phantora-rank on host {} (pid {}): {} (pid {}) {}", watch.host,
                     watch.pid, watch.command, watch.commandPid, watch.exitMessage);
    }
    SendTo(identity, {seq, wire::SupervisorNote{}});
}

void BridgeServer::TellRemotes(const RunOutcome& outcome)
{
    if (!m_options.remoteRanks)
    {
        return;
    }
    wire::SupervisorNote note;
    note.state =
        outcome.ok ? wire::SupervisorNote::State::Done : wire::SupervisorNote::State::Failed;
    note.message = outcome.failure;
    for (const auto& identity : m_supervisors.Identities())
    {
        SendTo(identity, {0, note});
    }
    if (!outcome.ok)
    {
        // A rank waiting in a call gets this as its answer and ends with the message.
        for (const auto& [lane, identity] : m_identityOf)
        {
            SendTo(identity, {0, wire::Failure{"the simulation failed: " + outcome.failure}});
        }
    }
    // What was just queued must leave before the socket closes with the server.
    m_socket.set(zmq::sockopt::linger, 2000);
}

void BridgeServer::OnMessage(const std::string& identity, const std::string& payload,
                             const std::string& address)
{
    wire::RequestEnvelope req;
    try
    {
        req = wire::DecodeRequest(payload);
    }
    catch (const wire::DecodeError& e)
    {
        // Anything can connect to a TCP port: never let a stranger's bytes end the run.
        ++m_rejected;
        spdlog::warn("bridge: rejected a message ({} bytes): {}", payload.size(), e.what());
        return;
    }
    if (const auto* watch = std::get_if<wire::Watch>(&req.body))
    {
        OnWatch(identity, req.seq, *watch, address);
        return;
    }
    if (const auto* hello = std::get_if<wire::Hello>(&req.body))
    {
        if (hello->token != m_options.token)
        {
            ++m_rejected;
            spdlog::warn("bridge: refused a connection claiming rank {} (pid {}): wrong token",
                         hello->rank, hello->pid);
            SendTo(identity,
                   {req.seq,
                    wire::Failure{"wrong phantora token: this bridge belongs to another run"}});
            return;
        }
        if (hello->rank < 0 || hello->rank >= m_engine.WorldSize())
        {
            SendTo(identity,
                   {req.seq, wire::Failure{fmt::format("rank {} is outside the world of {} ranks",
                                                       hello->rank, m_engine.WorldSize())}});
            if (m_options.remoteRanks)
            {
                // Anyone holding the keys can connect to a served bridge: a stranger (or a
                // host of another run) claiming a rank nobody runs must not end this one.
                ++m_rejected;
                spdlog::warn("bridge: refused a connection from {} claiming rank {} (pid {}): "
                             "outside the world of {} ranks",
                             address, hello->rank, hello->pid, m_engine.WorldSize());
                return;
            }
            throw SimulationError(
                fmt::format("a process (pid {}) connected as rank {}, outside the world of {}",
                            hello->pid, hello->rank, m_engine.WorldSize()));
        }
        auto known = m_pidOf.find(hello->rank);
        if (hello->claimedBy != 0 && known != m_pidOf.end() && known->second != hello->pid)
        {
            // A process the rank started (interposer/process_role.h): it may query the
            // device, answered where it runs; what needs the simulation is the rank's.
            const std::string what = fmt::format(
                "pid {} ({}), a process started beside rank {} (pid {}), called {}: a process "
                "a rank starts (a compile worker, a probe) may query the simulated GPU but "
                "not use it; only the rank's own process may",
                hello->pid, hello->processCommand, hello->rank, known->second, hello->call);
            SendTo(identity, {req.seq, wire::Failure{what}});
            throw SimulationError(what);
        }
        if ((known != m_pidOf.end() && known->second != hello->pid) ||
            m_identityOf.count({hello->rank, req.lane}))
        {
            SendTo(identity, {req.seq, wire::Failure{fmt::format("rank {} is already connected",
                                                                 hello->rank)}});
            if (m_options.remoteRanks)
            {
                // A replayed hello, or a second host started as the same rank: the rank that
                // connected first goes on.
                ++m_rejected;
                spdlog::warn("bridge: refused a connection from {} claiming rank {} (pid {}) "
                             "thread {}: the rank is already connected (pid {})",
                             address, hello->rank, hello->pid, req.lane,
                             known != m_pidOf.end() ? known->second : hello->pid);
                return;
            }
            throw SimulationError(fmt::format(
                "two processes connected as rank {} (pid {} and pid {}): only one process per rank "
                "may use CUDA",
                hello->rank, known != m_pidOf.end() ? known->second : hello->pid, hello->pid));
        }
        m_pidOf[hello->rank] = hello->pid;
        m_supervisors.OnRankHello(hello->rank, hello->pid, hello->supervisor);
        m_laneOf[identity] = {hello->rank, req.lane};
        m_identityOf[{hello->rank, req.lane}] = identity;
    }
    auto it = m_laneOf.find(identity);
    if (it == m_laneOf.end())
    {
        ++m_rejected;
        spdlog::warn("bridge: ignored {} from a peer that has not said hello{}",
                     wire::RequestName(req.body), address.empty() ? "" : " (" + address + ")");
        return;
    }
    if (req.lane != it->second.second)
    {
        throw SimulationError(fmt::format("rank {}: thread {} sent a request as thread {}",
                                          it->second.first, it->second.second, req.lane));
    }
    LaneLog& log = m_laneLogs[it->second];
    if (req.seq != log.lastSeq + 1)
    {
        // A lane numbers its requests 1, 2, 3, ... and its connection keeps them in
        // order: a jump is a request lost between the rank and the bridge.
        throw SimulationError(fmt::format(
            "rank {}: thread {}'s request {} ({}, order number {}) came after its request {}: "
            "request {} of that thread was lost on the way to the bridge",
            it->second.first, it->second.second, req.seq, wire::RequestName(req.body), req.order,
            log.lastSeq, log.lastSeq + 1));
    }
    log.lastSeq = req.seq;
    log.lastOrder = req.order;
    log.lastRequest = wire::RequestName(req.body);
    ++m_requests;
    if (const auto* event = std::get_if<wire::HostEvent>(&req.body))
    {
        if (static_cast<std::size_t>(event->kind) < m_hostEvents.size())
        {
            ++m_hostEvents[static_cast<std::size_t>(event->kind)];
        }
        static constexpr const char* kKinds[] = {"HostEvent Born",   "HostEvent Block",
                                                 "HostEvent Resume", "HostEvent Wake",
                                                 "HostEvent Exit",   "HostEvent BlockOutside"};
        const auto kind = static_cast<std::size_t>(event->kind);
        log.lastRequest = kind < std::size(kKinds) ? kKinds[kind] : "HostEvent";
        log.saidExit = log.saidExit || event->kind == wire::HostEventKind::Exit;
    }
    Deliver(it->second.first, std::move(req));
}

std::string BridgeServer::DescribeGap(int rank, const Inbox& in,
                                      std::chrono::steady_clock::time_point now) const
{
    const double waited = std::chrono::duration<double>(now - in.waitingSince).count();
    const auto pid = m_pidOf.find(rank);
    std::string text = fmt::format(
        "rank {} (pid {}) has waited {:.1f} s for its request with order number {}, which has not "
        "reached the bridge; {} later requests of it are held (order numbers {} to {})",
        rank, pid != m_pidOf.end() ? pid->second : 0, waited, in.next, in.early.size(),
        in.early.begin()->first, in.early.rbegin()->first);
    // The request's lane sent everything before it and nothing after (its connection
    // keeps order): a lane whose last request came before the missing number.
    std::string senders;
    int count = 0;
    for (auto it = m_laneLogs.lower_bound({rank, 0});
         it != m_laneLogs.end() && it->first.first == rank; ++it)
    {
        const LaneLog& log = it->second;
        if (log.lastOrder < in.next)
        {
            if (++count <= 8)
            {
                senders += fmt::format("{}thread {} (its request {}, {}, order number {}{})",
                                       count > 1 ? "; " : "", it->first.second, log.lastSeq,
                                       log.lastRequest, log.lastOrder,
                                       log.saidExit ? ", then it said it exits" : "");
            }
        }
    }
    if (count > 8)
    {
        senders += fmt::format("; and {} more", count - 8);
    }
    text += count > 0 ? fmt::format("; sent by one of the threads whose last request came before "
                                    "it: {}",
                                    senders)
                      : "; no thread of the rank could have sent it";
    return text;
}

std::string BridgeServer::DescribeGaps(std::chrono::steady_clock::time_point now) const
{
    std::string text;
    for (const auto& [rank, in] : m_inboxes)
    {
        if (!in.early.empty())
        {
            text += "\n  " + DescribeGap(rank, in, now);
        }
    }
    return text;
}

void BridgeServer::CheckInboxes(std::chrono::steady_clock::time_point now) const
{
    for (const auto& [rank, in] : m_inboxes)
    {
        // An exited rank sends nothing more, and the run no longer waits for it (its
        // goodbye's socket lingers 2 s at most: interposer/lane_socket.h).
        const bool exited =
            m_engine.Ranks()[static_cast<std::size_t>(rank)].phase == RankPhase::Exited;
        if (!exited && !in.early.empty() && now - in.waitingSince > m_options.orderGapTimeout)
        {
            throw SimulationError(DescribeGap(rank, in, now) +
                                      fmt::format(" (the bridge waits {} s at most: "
                                                  "--order-gap-timeout)",
                                                  m_options.orderGapTimeout.count() / 1000.0),
                                  RunEnd::Timeout);
        }
    }
}

void BridgeServer::Deliver(int rank, wire::RequestEnvelope req)
{
    Inbox& in = m_inboxes[rank];
    const uint64_t order = req.order;
    const bool wasWaiting = !in.early.empty();
    if (order < in.next || !in.early.emplace(order, std::move(req)).second)
    {
        throw SimulationError(fmt::format("rank {} numbered two requests {}", rank, order));
    }
    ++m_held;
    const uint64_t before = in.next;
    for (auto due = in.early.find(in.next); due != in.early.end(); due = in.early.find(in.next))
    {
        const wire::RequestEnvelope next = std::move(due->second);
        in.early.erase(due);
        --m_held;
        ++in.next;
        m_engine.Handle(rank, next, m_outbox);
    }
    if (!in.early.empty() && (!wasWaiting || in.next != before))
    {
        in.waitingSince = std::chrono::steady_clock::now(); // a new number is missing
    }
    if (m_held > m_options.maxHeldRequests)
    {
        // Requests numbered after a missing one are kept, not dropped: the run cannot go
        // on without them.  Past this many it ends, naming the rank waiting the longest.
        const Inbox* oldest = nullptr;
        int oldestRank = 0;
        for (const auto& [r, i] : m_inboxes)
        {
            if (!i.early.empty() && (!oldest || i.waitingSince < oldest->waitingSince))
            {
                oldest = &i;
                oldestRank = r;
            }
        }
        throw SimulationError(
            DescribeGap(oldestRank, *oldest, std::chrono::steady_clock::now()) +
            fmt::format(" (the bridge holds {} requests waiting for missing ones, more than "
                        "the {} it may: --max-held-requests)",
                        m_held, m_options.maxHeldRequests));
    }
}

void BridgeServer::ReceiveAll()
{
    // Bounded: with ranks sending as fast as the bridge receives, the socket is never
    // empty, and the loop must still come back to signals, exits and the network.
    constexpr int kMostPerTurn = 4096;
    for (int received = 0; received < kMostPerTurn && !g_interrupted; ++received)
    {
        zmq::message_t identity;
        if (!m_socket.recv(identity, zmq::recv_flags::dontwait))
        {
            return;
        }
        zmq::message_t payload;
        if (!identity.more() || !m_socket.recv(payload, zmq::recv_flags::none))
        {
            ++m_rejected;
            continue;
        }
        while (payload.more())
        {
            // extra frames are not ours: drop them
            zmq::message_t extra;
            (void)m_socket.recv(extra, zmq::recv_flags::none);
        }
        // The peer's network address (TCP), to name a remote rank's host.
        const char* address =
            m_options.remoteRanks ? zmq_msg_gets(payload.handle(), "Peer-Address") : nullptr;
        OnMessage(identity.to_string(), payload.to_string(), address ? address : "");
    }
}

void BridgeServer::Interrupted()
{
    // What the run waited on, before the ranks are ended: the engine's view (who holds
    // simulated time back) on stderr, the requests that never came in the failure.
    std::fputs(m_engine.StateReport().c_str(), stderr);
    std::fflush(stderr);
    const std::string gaps = DescribeGaps(std::chrono::steady_clock::now());
    const int signal = static_cast<int>(g_interrupted);
    throw SimulationError(fmt::format("interrupted by signal {}{}", signal,
                                      gaps.empty() ? "" : "; waiting for requests:" + gaps),
                          RunEnd::Interrupted, signal);
}

void BridgeServer::DrainGoodbyes()
{
    // A rank's last message can still be in flight when its exit is seen; its
    // report (peak memory) must not be lost to that race.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    auto pending = [this]
    {
        for (const auto& [rank, pid] : m_pidOf)
        {
            if (!m_engine.Ranks()[static_cast<std::size_t>(rank)].saidGoodbye)
            {
                return true;
            }
        }
        return false;
    };
    while (pending() && std::chrono::steady_clock::now() < deadline)
    {
        zmq::pollitem_t item{m_socket.handle(), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(20));
        ReceiveAll();
    }
}

void BridgeServer::ReportRequests(std::chrono::steady_clock::time_point started) const
{
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::size_t ranks = std::max<std::size_t>(1, m_pidOf.size());
    const std::pair<int, uint32_t>* busiest = nullptr;
    uint64_t most = 0;
    for (const auto& [key, log] : m_laneLogs)
    {
        if (log.lastSeq > most) // a lane numbers its requests 1, 2, 3, ...
        {
            most = log.lastSeq;
            busiest = &key;
        }
    }
    const auto& h = m_hostEvents;
    const uint64_t hostEvents = h[0] + h[1] + h[2] + h[3] + h[4] + h[5];
    // Two lines, each within the console's width with spdlog's 33-character prefix.
    spdlog::info(
        "bridge: {} requests from {} ranks in {:.1f} s ({:.1f} per rank per second), most "
        "from one thread: {}",
        m_requests, m_pidOf.size(), seconds,
        static_cast<double>(m_requests) / static_cast<double>(ranks) / std::max(seconds, 1e-9),
        busiest ? fmt::format("{} (rank {} thread {})", most, busiest->first, busiest->second)
                : std::string("none"));
    spdlog::info("bridge: {} host events: {} Block, {} Resume, {} Wake, {} Born, {} Exit, {} "
                 "BlockOutside",
                 hostEvents, h[1], h[2], h[3], h[0], h[4], h[5]);
}

RunOutcome BridgeServer::Run(Launcher& launcher)
{
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    std::signal(SIGUSR1, OnDumpSignal);
    const auto started = std::chrono::steady_clock::now();
    RunOutcome outcome;
    try
    {
        while (!m_engine.AllDone())
        {
            std::vector<zmq::pollitem_t> items;
            items.push_back({m_socket.handle(), 0, ZMQ_POLLIN, 0});
            const std::vector<int> fds = launcher.OutputFds();
            for (int fd : fds)
            {
                items.push_back({nullptr, fd, ZMQ_POLLIN, 0});
            }
            const std::size_t launcherEnd = items.size();
            if (m_zap)
            {
                items.push_back({m_zap.handle(), 0, ZMQ_POLLIN, 0});
            }
            // No waiting while the network has work to run ahead on.
            try
            {
                zmq::poll(items.data(), items.size(),
                          std::chrono::milliseconds(m_engine.WantsProgress() ? 0 : 50));
            }
            catch (const zmq::error_t& e)
            {
                if (e.num() != EINTR)
                {
                    throw;
                }
                // a signal: reported just below
            }
            if (g_dumpState)
            {
                g_dumpState = 0;
                std::fputs(m_engine.StateReport().c_str(), stderr);
                std::fflush(stderr);
            }
            if (g_interrupted)
            {
                Interrupted();
            }
            for (std::size_t i = 1; i < launcherEnd; ++i)
            {
                if (items[i].revents)
                {
                    launcher.Relay(fds[i - 1]);
                }
            }
            AnswerZap();
            ReceiveAll();
            if (g_interrupted)
            {
                Interrupted();
            }
            CheckInboxes(std::chrono::steady_clock::now());
            if (m_options.remoteRanks)
            {
                if (auto lost =
                        m_supervisors.Check(m_engine.Ranks(), std::chrono::steady_clock::now()))
                {
                    throw SimulationError(*lost, RunEnd::RankFailed);
                }
                for (const auto& [rank, pid] : m_pidOf)
                {
                    const RankState& r = m_engine.Ranks()[static_cast<std::size_t>(rank)];
                    if (r.saidGoodbye && r.phase != RankPhase::Exited)
                    {
                        m_engine.RankExited(rank);
                    }
                }
            }
            for (const RankExit& e : launcher.Reap())
            {
                const RankState& r = m_engine.Ranks()[static_cast<std::size_t>(e.rank)];
                if (!e.clean)
                {
                    launcher.RelayAll();
                    throw SimulationError(
                        fmt::format(
                            "rank {} (pid {}) {}; its last call was {} at simulated {:.6f} ms\n{}",
                            e.rank, e.pid, e.description, r.lastCall,
                            static_cast<double>(r.clockNs) / 1e6, launcher.StderrTail(e.rank)),
                        RunEnd::RankFailed);
                }
                m_engine.RankExited(e.rank);
            }
            m_engine.Progress(m_outbox);
            Flush();
            if (m_onTurn)
            {
                m_onTurn();
            }
            // From the ranks' start: a fork server that failed and had them exec'd
            // restarted them.
            if (m_pidOf.size() < static_cast<std::size_t>(m_engine.Fold().LiveCount()) &&
                std::chrono::steady_clock::now() - std::max(started, launcher.RanksStarted()) >
                    m_options.connectTimeout)
            {
                std::string missing;
                for (int r = 0; r < m_engine.WorldSize(); ++r)
                {
                    const RankPhase phase = m_engine.Ranks()[static_cast<std::size_t>(r)].phase;
                    if (!m_pidOf.count(r) && phase != RankPhase::Exited &&
                        phase != RankPhase::Folded)
                    {
                        missing += fmt::format(" {}", r);
                    }
                }
                if (!missing.empty() && launcher.ForkServerPid() > 0)
                {
                    throw SimulationError(
                        fmt::format(
                            "ranks{} have not made a CUDA call within {} s of the start: the fork "
                            "server (pid {}) is still importing the program's modules before "
                            "forking them (--connect-timeout S waits longer; --no-fork-server "
                            "execs the ranks)",
                            missing, m_options.connectTimeout.count(), launcher.ForkServerPid()),
                        RunEnd::Timeout);
                }
                if (!missing.empty())
                {
                    throw SimulationError(
                        fmt::format(
                            "ranks{} have not made a CUDA call within {} s of the start (is the "
                            "program "
                            "using the GPU, and was it started with the interposer preloaded?)",
                            missing, m_options.connectTimeout.count()),
                        RunEnd::Timeout);
                }
            }
        }
        DrainGoodbyes();
        launcher.RelayAll();
        outcome.ok = true;
        outcome.end = RunEnd::Completed;
    }
    catch (const SimulationError& e)
    {
        launcher.RelayAll();
        outcome.failure = e.what();
        outcome.end = e.End();
        outcome.signal = e.Signal();
        launcher.TerminateAll();
    }
    catch (const std::exception& e)
    {
        launcher.RelayAll();
        outcome.failure = e.what();
        outcome.end = RunEnd::Error;
        launcher.TerminateAll();
    }
    ReportRequests(started);
    TellRemotes(outcome);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    std::signal(SIGUSR1, SIG_DFL);
    return outcome;
}

} // namespace phantora
