// What the bridge of a served run (phantora-cluster --serve) knows about the
// phantora-rank processes that started its ranks on other hosts.  Each one stays the
// parent of its command and sends a Watch every second: the bridge learns from the
// last Watch that a command ended (and how), and from missing ones that a host went
// away.  Without this, a rank that dies far away leaves the bridge waiting forever:
// no exit status is ever reaped, and a ROUTER socket does not say which peer it lost
// (ZMQ_ROUTER_NOTIFY is a draft API that Debian's libzmq is built without).
#pragma once

#include "engine/rank_state.h"
#include "protocol/messages.h"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phantora
{

class RemoteSupervisors
{
public:
    using Clock = std::chrono::steady_clock;

    /// \p heartbeatTimeout: silence after which a phantora-rank's host counts as lost.
    /// \p exitGrace: how long after a command's exit its ranks' goodbyes may still
    /// arrive (they travel on other connections than the Watch).
    RemoteSupervisors(Clock::duration heartbeatTimeout, Clock::duration exitGrace);

    /// A Watch from the peer with ZeroMQ routing \p identity, at network \p address.
    void OnWatch(const wire::Watch& watch, const std::string& identity, const std::string& address,
                 Clock::time_point now);

    /// A rank's hello: \p supervisor is Hello::supervisor (empty: none).
    void OnRankHello(int rank, int pid, const std::string& supervisor);

    /// Why the run must end now, naming the ranks that are lost; nothing while every
    /// phantora-rank is heard from and every ended command's ranks said goodbye.
    std::optional<std::string> Check(const std::vector<RankState>& ranks,
                                     Clock::time_point now) const;

    /// The routing identities of every phantora-rank heard from, for the last note.
    std::vector<std::string> Identities() const;

private:
    struct Supervisor
    {
        wire::Watch last;
        std::string identity;
        std::string address;
        Clock::time_point lastSeen;
        Clock::time_point exitSeen;
    };

    /// "rank 3 (host h [10.0.0.2], pid 123)" for each of \p ranks.
    std::string NameRanks(const std::vector<int>& ranks, const Supervisor& s) const;

    Clock::duration m_heartbeatTimeout;
    Clock::duration m_exitGrace;
    std::map<std::string, Supervisor> m_supervisors; ///< by Watch::id
    std::map<int, std::string> m_supervisorOf;       ///< rank -> Watch::id
    std::map<int, int> m_pidOf;                      ///< rank -> pid from its hello
};

} // namespace phantora
