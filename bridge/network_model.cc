#include "network_model.h"

#include "ns3/data-rate.h"
#include "ns3/nccl-plan-executor.h"
#include "ns3/simulator.h"
#include "topology_from_scenario.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace phantora
{

namespace
{

constexpr int64_t kPsPerNs = 1000;

// Network instants are picoseconds; a rank can only observe whole nanoseconds, and
// rounding up keeps "done" from being reported before it happened.
int64_t CeilNs(int64_t ps)
{
    return ps / kPsPerNs + (ps % kPsPerNs > 0 ? 1 : 0);
}

} // namespace

NetworkModel::NetworkModel(const Scenario& scenario) : m_scenario(scenario)
{
    static const bool resolutionSet = []
    {
        ns3::Time::SetResolution(ns3::Time::PS);
        return true;
    }();
    (void)resolutionSet;
    Build();
    m_checkpoints.push_back({0, 0, 0, -1});
    ++m_counters.checkpoints;
}

NetworkModel::~NetworkModel()
{
    ns3::Simulator::Destroy();
}

void NetworkModel::Build()
{
    const Scenario& scenario = m_scenario;
    m_topology = BuildTopology(scenario);
    m_transport = InstallTransport(scenario, m_topology);
    m_transportName = scenario.network.transport == "flow" ? "flow" : "packet";
}

uint32_t NetworkModel::GpuCount() const
{
    return m_topology->GetNGpus();
}

int64_t NetworkModel::NowPs() const
{
    return m_basePs + ns3::Simulator::Now().GetPicoSeconds();
}

int64_t NetworkModel::NowNs() const
{
    return CeilNs(NowPs());
}

bool NetworkModel::Busy() const
{
    return m_inFlight > 0 || !m_pending.empty() || !m_done.empty();
}

void NetworkModel::StartCollective(int64_t startNs, nccl::Plan plan, std::vector<uint32_t> gpus,
                                   DoneFn onDone, OrderKey order, std::string label)
{
    CompletionFn whole;
    if (onDone)
    {
        whole = [onDone = std::move(onDone)](const Completion& c) { onDone(c.endNs); };
    }
    StartCollective(startNs, std::move(plan), std::move(gpus), std::move(whole), order,
                    std::move(label));
}

void NetworkModel::StartCollective(int64_t startNs, nccl::Plan plan, std::vector<uint32_t> gpus,
                                   CompletionFn onDone, OrderKey order, std::string label)
{
    const uint64_t id = m_nextId++;
    const int64_t startPs = startNs * kPsPerNs;
    // The collectives of one instant go after its network events, all together: one
    // arriving once that instant's batch was applied, or once the network ran past it,
    // would not be where it belongs.
    if (startPs < NowPs() || startPs <= m_lastBatchPs)
    {
        ++m_counters.pastEvents;
        Restore(startPs);
    }
    Logged& c = m_log[id];
    c.order = order;
    c.startPs = startPs;
    c.plan = std::move(plan);
    c.gpus = std::move(gpus);
    c.onDone = std::move(onDone);
    c.label = std::move(label);
    m_pending.insert({startPs, order, id});
}

void NetworkModel::Restore(int64_t startPs)
{
    auto cp = std::find_if(m_checkpoints.rbegin(), m_checkpoints.rend(),
                           [startPs](const Checkpoint& c)
                           { return c.ps <= startPs && c.lastBatchPs < startPs; });
    if (cp == m_checkpoints.rend())
    {
        throw std::logic_error("collective starting at " + std::to_string(startPs) +
                               " ps precedes every checkpoint the network kept");
    }
    const Checkpoint at = *cp;
    ++m_counters.restores;
    for (auto& [id, c] : m_log)
    {
        if (c.applied && *c.applied >= at.applied)
        {
            if (c.done && !c.takenEndNs)
            {
                m_done.erase(DoneKey{c.doneEndNs, c.order, id});
                ++m_counters.discardedCompletions;
            }
            if (c.recorder)
            {
                c.recorder->Dispose();
                c.recorder = nullptr;
            }
            c.applied.reset();
            c.done = false;
            m_pending.insert({c.startPs, c.order, id});
            ++m_counters.replayedCollectives;
        }
    }
    ns3::Simulator::Destroy();
    m_transport->Dispose();
    m_transport = nullptr;
    m_topology = nullptr;
    Build();
    m_transport->SetFlowNumbering(at.flows);
    m_basePs = at.ps;
    m_inFlight = 0;
    m_completed = false;
    m_drainedPs = -1;
    m_lastBatchPs = at.lastBatchPs;
    m_applied = at.applied;
    // The restored checkpoint stays the latest one.
    m_checkpoints.erase(cp.base(), m_checkpoints.end());
}

void NetworkModel::MaybeCheckpoint()
{
    const Checkpoint& last = m_checkpoints.back();
    const int64_t now = NowPs();
    if (last.ps == now && last.applied == m_applied)
    {
        return;
    }
    m_checkpoints.push_back({now, m_transport->GetFlowNumbering(), m_applied, m_lastBatchPs});
    ++m_counters.checkpoints;
}

void NetworkModel::Prune(int64_t fromPs)
{
    // Keep the latest checkpoint a collective starting at fromPs could restore, and
    // everything after it.
    auto keep = std::find_if(m_checkpoints.rbegin(), m_checkpoints.rend(),
                             [fromPs](const Checkpoint& c)
                             { return c.ps <= fromPs && c.lastBatchPs < fromPs; });
    if (keep == m_checkpoints.rend())
    {
        return;
    }
    const uint64_t applied = keep->applied;
    m_checkpoints.erase(m_checkpoints.begin(), std::prev(keep.base()));
    for (auto it = m_log.begin(); it != m_log.end();)
    {
        const Logged& c = it->second;
        if (c.applied && *c.applied < applied && c.done && c.takenEndNs)
        {
            it = m_log.erase(it);
        }
        else
        {
            ++it;
        }
    }
}

void NetworkModel::Launch(uint64_t id, Logged& c)
{
    c.applied = m_applied++;
    c.recorder = ns3::CreateObject<FlowRecordingTransport>();
    c.recorder->SetTarget(m_transport);
    ++m_inFlight;
    ns3::NcclPlanExecutor::Start(c.recorder, c.plan, c.gpus,
                                 ns3::NcclPlanExecutor::RankEndsCallback(
                                     [this, id](const ns3::NcclPlanExecutor::RankEnds& ends)
                                     {
                                         std::vector<std::vector<int64_t>> ns(ends.size());
                                         for (std::size_t k = 0; k < ends.size(); ++k)
                                         {
                                             for (const ns3::Time& t : ends[k])
                                             {
                                                 ns[k].push_back(
                                                     CeilNs(m_basePs + t.GetPicoSeconds()));
                                             }
                                         }
                                         Finished(id, ns);
                                     }));
}

void NetworkModel::Finished(uint64_t id, const std::vector<std::vector<int64_t>>& rankEndNs)
{
    --m_inFlight;
    m_completed = true;
    Logged& c = m_log.at(id);
    c.done = true;
    c.doneEndNs = CeilNs(NowPs());
    Completion done;
    done.id = id;
    done.label = c.label;
    done.startNs = CeilNs(c.startPs);
    done.endNs = CeilNs(NowPs());
    done.rankEndNs = rankEndNs;
    for (const auto& [pair, a] : c.recorder->Pairs())
    {
        done.flows.push_back({pair.first, pair.second, CeilNs(m_basePs + a.firstSendPs),
                              CeilNs(m_basePs + a.lastDeliveryPs), a.bytes, a.transfers});
    }
    c.recorder->Dispose();
    c.recorder = nullptr;
    if (c.takenEndNs)
    {
        // Replayed after it was taken: a restore only ever goes back before
        // collectives that cannot change what was already given out.
        if (*c.takenEndNs != done.endNs)
        {
            throw std::logic_error("replay changed a final collective end from " +
                                   std::to_string(*c.takenEndNs) + " ns to " +
                                   std::to_string(done.endNs) + " ns");
        }
    }
    else
    {
        m_done.emplace(DoneKey{done.endNs, c.order, id}, std::move(done));
    }
    // Hand control back to the bridge: ranks may be waiting for exactly this.
    ns3::Simulator::Stop();
}

void NetworkModel::ApplyBatch(int64_t atPs)
{
    m_lastBatchPs = atPs;
    while (!m_pending.empty() && std::get<0>(*m_pending.begin()) == atPs)
    {
        const uint64_t id = std::get<2>(*m_pending.begin());
        m_pending.erase(m_pending.begin());
        Launch(id, m_log.at(id));
    }
    m_drainedPs = -1;
}

void NetworkModel::DrainInstant()
{
    for (;;)
    {
        const uint64_t before = ns3::Simulator::GetEventCount();
        // Runs after everything already scheduled for now; what those schedule for now
        // comes after it, hence the loop.
        ns3::EventId marker = ns3::Simulator::ScheduleNow([] { ns3::Simulator::Stop(); });
        ns3::Simulator::Run();
        if (!marker.IsExpired())
        {
            ns3::Simulator::Remove(marker); // a completion stopped the run first
            continue;
        }
        if (ns3::Simulator::GetEventCount() - before == 1)
        {
            m_drainedPs = NowPs();
            return;
        }
    }
}

bool NetworkModel::Advance(int64_t limitNs)
{
    const int64_t limitPs = limitNs == kForever ? kForever : limitNs * kPsPerNs;
    m_completed = false;
    bool progressed = false;
    for (;;)
    {
        if (m_completed)
        {
            return true;
        }
        const int64_t nextStart = m_pending.empty() ? kForever : std::get<0>(*m_pending.begin());
        if (m_inFlight == 0 && ns3::Simulator::IsFinished())
        {
            MaybeCheckpoint();
            if (nextStart == kForever || nextStart >= limitPs)
            {
                return progressed;
            }
            if (nextStart > NowPs())
            {
                ns3::Simulator::Schedule(ns3::PicoSeconds(nextStart - NowPs()), [] {});
                ns3::Simulator::Run();
            }
            ApplyBatch(nextStart);
            progressed = true;
            continue;
        }
        const int64_t target = std::min(nextStart, limitPs);
        if (target == kForever)
        {
            ns3::Simulator::Run(); // until a completion stops it
            progressed = true;
            continue;
        }
        if (NowPs() < target)
        {
            ns3::EventId stop = ns3::Simulator::Schedule(ns3::PicoSeconds(target - NowPs()),
                                                         [] { ns3::Simulator::Stop(); });
            ns3::Simulator::Run();
            progressed = true;
            if (!stop.IsExpired())
            {
                ns3::Simulator::Remove(stop);
                continue; // a completion came first
            }
        }
        if (m_drainedPs != NowPs())
        {
            DrainInstant();
            progressed = true;
            if (m_completed)
            {
                return true;
            }
        }
        if (target == nextStart && nextStart < limitPs)
        {
            ApplyBatch(nextStart);
            progressed = true;
            continue;
        }
        return progressed;
    }
}

bool NetworkModel::RunUntil(int64_t horizonNs)
{
    for (;;)
    {
        bool taken = false;
        for (const Completion* c = NextCompletion(); c && c->endNs <= horizonNs;
             c = NextCompletion())
        {
            TakeCompletion();
            taken = true;
        }
        if (taken || !Advance(horizonNs))
        {
            return taken;
        }
    }
}

int64_t NetworkModel::UnknownFromPs() const
{
    int64_t from = m_pending.empty() ? kForever : std::get<0>(*m_pending.begin());
    if (m_inFlight > 0)
    {
        // Events of the present instant may still be waiting to run.
        from = std::min(from, m_drainedPs == NowPs() ? NowPs() + 1 : NowPs());
    }
    return from;
}

int64_t NetworkModel::UndecidedFromNs() const
{
    const int64_t unknown = UnknownFromPs();
    int64_t from = unknown == kForever ? kForever : CeilNs(unknown);
    if (!m_done.empty())
    {
        from = std::min(from, std::get<0>(m_done.begin()->first));
    }
    return from;
}

const NetworkModel::Completion* NetworkModel::NextCompletion() const
{
    if (m_done.empty())
    {
        return nullptr;
    }
    const int64_t unknown = UnknownFromPs();
    const Completion& first = m_done.begin()->second;
    if (unknown != kForever && CeilNs(unknown) <= first.endNs)
    {
        return nullptr; // one still running may end in the same nanosecond
    }
    return &first;
}

NetworkModel::Completion NetworkModel::TakeCompletion()
{
    if (!NextCompletion())
    {
        throw std::logic_error("TakeCompletion without a decided completion");
    }
    Completion c = std::move(m_done.begin()->second);
    m_done.erase(m_done.begin());
    Logged& logged = m_log.at(c.id);
    logged.takenEndNs = c.endNs;
    CompletionFn onDone = std::move(logged.onDone);
    Prune(c.endNs * kPsPerNs);
    // Last: it may start collectives, even restore the network.
    if (onDone)
    {
        onDone(c);
    }
    return c;
}

} // namespace phantora
