// A scripted rank side for engine tests: requests go in when the test says, with the
// sequence numbers a rank's interposer would give them, and the replies are collected by
// kind.
#pragma once

#include "engine/simulation_engine.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace phantora::test
{

class ScriptedRanks
{
public:
    /// Keeps its own copy of \p s: the engine holds a reference to it.
    ScriptedRanks(const Scenario& s, int worldSize, SyncMode mode)
        : m_scenario(s), m_engine(m_scenario, worldSize, &m_trace, mode)
    {
    }

    void Send(int rank, int64_t clockNs, wire::Request body)
    {
        wire::RequestEnvelope req;
        req.seq = ++m_seq[rank];
        req.order = req.seq - 1;
        req.clockNs = clockNs;
        req.body = std::move(body);
        m_engine.Handle(rank, req, m_out);
        Collect();
    }

    void Progress()
    {
        m_engine.Progress(m_out);
        Collect();
        while (m_engine.WantsProgress())
        {
            m_engine.Progress(m_out);
            Collect();
        }
    }

    /// Send, then Progress: a request as the engine meets it between two polls.
    void SendAndProgress(int rank, int64_t clockNs, wire::Request body)
    {
        Send(rank, clockNs, std::move(body));
        Progress();
    }

    /// Each of ranks 0 .. \p worldSize - 1 that was resumed leaves at its last resume.
    void GoodbyeAfterLastResume(int worldSize)
    {
        for (int rank = 0; rank < worldSize; ++rank)
        {
            if (!resumes[rank].empty())
            {
                SendAndProgress(rank, resumes[rank].back(), wire::Goodbye{});
            }
        }
    }

    uint64_t CommOf(int rank) const { return m_comm.at(rank); }
    /// Resume instants, per rank, in the order given.
    std::map<int, std::vector<int64_t>> resumes;
    /// cudaEventQuery answers, per rank.
    std::map<int, std::vector<bool>> queries;

    std::string Trace()
    {
        const auto file = std::filesystem::temp_directory_path() /
                          ("phantora-engine-trace-" + std::to_string(getpid()) + ".json");
        m_trace.Write(file);
        std::ifstream in(file);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::filesystem::remove(file);
        return text;
    }

    const SimulationEngine& Engine() const { return m_engine; }

private:
    void Collect()
    {
        for (const auto& o : m_out)
        {
            if (const auto* r = std::get_if<wire::Resume>(&o.reply.body))
            {
                resumes[o.rank].push_back(r->clockNs);
            }
            if (const auto* q = std::get_if<wire::QueryAnswer>(&o.reply.body))
            {
                queries[o.rank].push_back(q->ready);
            }
            if (const auto* c = std::get_if<wire::CommReady>(&o.reply.body))
            {
                m_comm[o.rank] = c->comm;
            }
        }
        m_out.clear();
    }

    Scenario m_scenario;
    TraceRecorder m_trace;
    SimulationEngine m_engine;
    std::vector<OutgoingReply> m_out;
    std::map<int, uint64_t> m_seq;
    std::map<int, uint64_t> m_comm;
};

/// The scenario engine tests start from: \p gpus H200-like GPUs on one switch (400 Gb/s
/// links of 1 us), nothing measured.
inline Scenario EngineScenario(std::string name, uint32_t gpus, int64_t launchLatencyNs)
{
    Scenario s;
    s.name = std::move(name);
    s.gpu.launchLatencyNs = launchLatencyNs;
    s.gpu.hbmBitsPerSecond = 4.8e12 * 8;
    s.gpu.pcieBitsPerSecond = 55e9 * 8;
    s.topology.gpus = gpus;
    s.topology.gpusPerNode = gpus;
    s.topology.linkBitsPerSecond = 400e9;
    s.topology.linkLatencyNs = 1000;
    return s;
}

/// Rank \p rank of \p worldSize saying hello (pid 100 + rank).
inline wire::Hello HelloOf(int rank, int worldSize)
{
    wire::Hello m;
    m.rank = rank;
    m.worldSize = worldSize;
    m.localRank = rank;
    m.pid = 100 + rank;
    return m;
}

/// ncclCommInitRank of rank \p rank in a communicator of \p nranks with unique id \p id.
inline wire::NcclCommInit CommInit(uint8_t id, int rank, int nranks)
{
    wire::NcclCommInit m;
    m.id.fill(id);
    m.nranks = nranks;
    m.rank = rank;
    return m;
}

} // namespace phantora::test
