#include "remote_supervisors.h"

#include <fmt/format.h>
#include <set>

namespace phantora
{

RemoteSupervisors::RemoteSupervisors(Clock::duration heartbeatTimeout, Clock::duration exitGrace)
    : m_heartbeatTimeout(heartbeatTimeout), m_exitGrace(exitGrace)
{
}

void RemoteSupervisors::OnWatch(const wire::Watch& watch, const std::string& identity,
                                const std::string& address, Clock::time_point now)
{
    Supervisor& s = m_supervisors[watch.id];
    if (watch.exited && !s.last.exited)
    {
        s.exitSeen = now;
    }
    s.last = watch;
    s.identity = identity;
    s.address = address;
    s.lastSeen = now;
    if (watch.rank >= 0)
    {
        m_supervisorOf.emplace(watch.rank, watch.id);
    }
}

void RemoteSupervisors::OnRankHello(int rank, int pid, const std::string& supervisor)
{
    m_pidOf[rank] = pid;
    if (!supervisor.empty())
    {
        m_supervisorOf[rank] = supervisor;
    }
}

std::string RemoteSupervisors::NameRanks(const std::vector<int>& ranks, const Supervisor& s) const
{
    const std::string host =
        s.address.empty() ? s.last.host : fmt::format("{} [{}]", s.last.host, s.address);
    std::string names;
    for (int r : ranks)
    {
        const auto pid = m_pidOf.find(r);
        names += fmt::format("{}rank {} (host {}, {})", names.empty() ? "" : ", ", r, host,
                             pid == m_pidOf.end() ? std::string("not connected")
                                                  : fmt::format("pid {}", pid->second));
    }
    if (names.empty())
    {
        names = fmt::format("the ranks of phantora-rank on host {} (pid {}; none connected yet)",
                            host, s.last.pid);
    }
    return names;
}

std::optional<std::string> RemoteSupervisors::Check(const std::vector<RankState>& ranks,
                                                    Clock::time_point now) const
{
    for (const auto& [id, s] : m_supervisors)
    {
        std::set<int> mine;
        for (const auto& [rank, of] : m_supervisorOf)
        {
            if (of == id)
            {
                mine.insert(rank);
            }
        }
        std::vector<int> pending;
        for (int r : mine)
        {
            if (r >= static_cast<int>(ranks.size()))
            {
                continue;
            }
            const RankState& st = ranks[static_cast<std::size_t>(r)];
            if (!st.saidGoodbye && st.phase != RankPhase::Exited)
            {
                pending.push_back(r);
            }
        }
        if (s.last.exited)
        {
            if (now - s.exitSeen < m_exitGrace || (s.last.clean && pending.empty()))
            {
                continue;
            }
            return fmt::format(
                "{}: its phantora-rank (pid {}) reports that its command {} (pid {}) "
                "{}{}",
                NameRanks(pending.empty() ? std::vector<int>(mine.begin(), mine.end()) : pending,
                          s),
                s.last.pid, s.last.command, s.last.commandPid, s.last.exitMessage,
                pending.empty() ? "" : ", before the rank said goodbye");
        }
        if (now - s.lastSeen > m_heartbeatTimeout && (!pending.empty() || mine.empty()))
        {
            return fmt::format(
                "{}: lost: nothing heard from its phantora-rank (pid {}) for {:.1f} s (its host is "
                "down or cut off, or phantora-rank was killed)",
                NameRanks(pending, s), s.last.pid,
                std::chrono::duration<double>(now - s.lastSeen).count());
        }
    }
    return std::nullopt;
}

std::vector<std::string> RemoteSupervisors::Identities() const
{
    std::vector<std::string> out;
    for (const auto& [id, s] : m_supervisors)
    {
        out.push_back(s.identity);
    }
    return out;
}

} // namespace phantora
