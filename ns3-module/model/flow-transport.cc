#include "flow-transport.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowTransport");
NS_OBJECT_ENSURE_REGISTERED(FlowTransport);

TypeId FlowTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowTransport")
            .SetParent<PhantoraTransport>()
            .SetGroupName("Phantora")
            .AddConstructor<FlowTransport>()
            .AddAttribute("Mtu",
                          "Largest packet on the wire, header included, as on the packet-level "
                          "transport: it sets how many headers a transfer carries",
                          UintegerValue(4096), MakeUintegerAccessor(&FlowTransport::m_mtu),
                          MakeUintegerChecker<uint32_t>(2))
            .AddAttribute("HeaderBytes",
                          "Per-packet wire overhead, as on the packet-level transport",
                          UintegerValue(48), MakeUintegerAccessor(&FlowTransport::m_headerBytes),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

FlowTransport::FlowTransport() : m_completions([this] { CompleteDue(); })
{
    NS_LOG_FUNCTION(this);
}

FlowTransport::~FlowTransport() = default;

void FlowTransport::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // Pending events call back into this object through a raw pointer.
    m_completions.Clear();
    m_updateEvent.Cancel();
    m_updatePending = false;
    m_rates.Clear();
    m_flows.clear();
    m_topology = nullptr;
    PhantoraTransport::DoDispose();
}

void FlowTransport::SetTopology(Ptr<ClusterTopology> topology)
{
    if (m_rates.GetNActiveFlows() > 0)
    {
        throw std::logic_error("FlowTransport: cannot change the topology under active flows");
    }
    m_topology = topology;
    m_rates.SetResources({});
    m_txCache.clear();
    m_routes.Clear();
}

Ptr<ClusterTopology> FlowTransport::GetTopology() const
{
    return m_topology;
}

uint32_t FlowTransport::GetNGpus() const
{
    return m_topology ? m_topology->GetNGpus() : 0;
}

uint64_t FlowTransport::GetFlowNumbering() const
{
    return m_flowCounter;
}

void FlowTransport::SetFlowNumbering(uint64_t flowsSent)
{
    if (m_rates.GetNActiveFlows() > 0)
    {
        throw std::logic_error("FlowTransport::SetFlowNumbering with flows in flight");
    }
    m_flowCounter = flowsSent;
}

uint64_t FlowTransport::GetPacketCount(uint64_t bytes) const
{
    if (m_mtu <= m_headerBytes)
    {
        throw std::invalid_argument("FlowTransport: Mtu (" + std::to_string(m_mtu) +
                                    ") must exceed HeaderBytes (" + std::to_string(m_headerBytes) +
                                    ")");
    }
    const uint64_t payload = m_mtu - m_headerBytes;
    return bytes == 0 ? 1 : (bytes + payload - 1) / payload;
}

uint64_t FlowTransport::GetWireBytes(uint64_t bytes) const
{
    return bytes + GetPacketCount(bytes) * m_headerBytes;
}

int64_t FlowTransport::TxSteps(uint32_t link, uint32_t wire) const
{
    // Nearly every flow asks for the same two sizes on a link, and each TxTime costs a
    // 128-bit division.
    if (m_txCache.size() != m_topology->GetNLinks())
    {
        m_txCache.assign(m_topology->GetNLinks(), TxCache{});
    }
    TxCache& c = m_txCache[link];
    const int slot = wire == m_mtu ? 0 : 1;
    if (c.wire[slot] != wire)
    {
        c.wire[slot] = wire;
        c.steps[slot] = m_topology->GetLink(link).rate.CalculateBytesTxTime(wire).GetTimeStep();
    }
    return c.steps[slot];
}

Time FlowTransport::GetLoneFlowTime(const std::vector<ClusterTopology::Hop>& path,
                                    uint64_t bytes) const
{
    const uint64_t n = GetPacketCount(bytes);
    const uint64_t payload = m_mtu - m_headerBytes;
    const auto lastWire = static_cast<uint32_t>(bytes - (n - 1) * payload + m_headerBytes);
    int64_t delays = 0;
    int64_t lastFrom = 0;
    for (const auto& hop : path)
    {
        delays += m_topology->GetLink(hop.link).delay.GetTimeStep();
        lastFrom += TxSteps(hop.link, lastWire);
    }
    if (n == 1)
    {
        return TimeStep(lastFrom + delays);
    }
    // Store-and-forward of n-1 full packets then a last one: the last packet arrives at
    // max over hops j of [the full packets' pipeline up to j] + [the last packet from j on],
    // the full packets' pipeline being one packet per hop plus n-2 more at its slowest hop.
    int64_t fullSum = 0;
    int64_t fullMax = 0;
    int64_t best = 0;
    for (const auto& hop : path)
    {
        const int64_t full = TxSteps(hop.link, m_mtu);
        fullSum += full;
        fullMax = std::max(fullMax, full);
        best = std::max(best, fullSum + static_cast<int64_t>(n - 2) * fullMax + lastFrom);
        lastFrom -= TxSteps(hop.link, lastWire);
    }
    return TimeStep(best + delays);
}

uint32_t FlowTransport::GetNActiveFlows(uint32_t link, bool forward) const
{
    const size_t r = 2 * static_cast<size_t>(link) + (forward ? 0 : 1);
    if (r >= m_rates.GetNResources())
    {
        return 0;
    }
    return m_rates.GetNFlowsOn(static_cast<uint32_t>(r));
}

int64_t FlowTransport::DrainSteps(double bytes, double rate)
{
    const double x = bytes / rate;
    if (!(x > 0))
    {
        return 0;
    }
    const double whole = std::floor(x);
    // Rounding up turns float noise just above an integer into a whole extra step; an exact
    // quotient must land on the step the arithmetic meant.
    return static_cast<int64_t>(whole) + (x - whole <= 1e-9 + x * 1e-12 ? 0 : 1);
}

void FlowTransport::BuildResources()
{
    const double stepsPerSecond = static_cast<double>(Seconds(1).GetTimeStep());
    const uint32_t nLinks = m_topology->GetNLinks();
    std::vector<double> capacities(2 * static_cast<size_t>(nLinks));
    for (uint32_t l = 0; l < nLinks; ++l)
    {
        const double cap =
            static_cast<double>(m_topology->GetLink(l).rate.GetBitRate()) / 8.0 / stepsPerSecond;
        capacities[2 * l] = cap;
        capacities[2 * l + 1] = cap;
    }
    m_rates.SetResources(capacities);
    // Whatever enters a forwarding node with two links leaves by the other one (routes
    // neither start, end nor turn back there), so of the two directions in series only the
    // slower can ever be a bottleneck.  Leaving the other out of the allocation spares a
    // third of the work on GPU - PCIe - NIC - fabric paths.
    std::vector<std::vector<uint32_t>> incident(m_topology->GetNNodes());
    for (uint32_t l = 0; l < nLinks; ++l)
    {
        incident[m_topology->GetLink(l).a].push_back(l);
        incident[m_topology->GetLink(l).b].push_back(l);
    }
    for (uint32_t v = 0; v < m_topology->GetNNodes(); ++v)
    {
        if (m_topology->GetNode(v).kind == ClusterTopology::NodeKind::Gpu ||
            incident[v].size() != 2)
        {
            continue;
        }
        const uint32_t l1 = incident[v][0];
        const uint32_t l2 = incident[v][1];
        // resource of link l in the direction that enters / leaves v
        auto into = [&](uint32_t l) { return 2 * l + (m_topology->GetLink(l).b == v ? 0 : 1); };
        auto outOf = [&](uint32_t l) { return 2 * l + (m_topology->GetLink(l).a == v ? 0 : 1); };
        for (auto [in, out] : {std::pair{into(l1), outOf(l2)}, std::pair{into(l2), outOf(l1)}})
        {
            // the faster one goes; on a tie the second, so that a chain keeps its first
            if (m_rates.GetCapacity(in) <= m_rates.GetCapacity(out))
            {
                m_rates.SetAlias(out, in);
            }
            else
            {
                m_rates.SetAlias(in, out);
            }
        }
    }
}

std::vector<ClusterTopology::Hop> FlowTransport::GetRoute(uint32_t srcGpu, uint32_t dstGpu,
                                                          uint64_t flowHash)
{
    if (!m_topology)
    {
        throw std::logic_error("FlowTransport::GetRoute before SetTopology");
    }
    return m_routes.Route(*m_topology, srcGpu, dstGpu, flowHash);
}

void FlowTransport::Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
                         DeliveredCallback onDelivered)
{
    NS_LOG_FUNCTION(this << srcGpu << dstGpu << bytes);
    if (!m_topology)
    {
        throw std::logic_error("FlowTransport::Send before SetTopology");
    }
    if (m_rates.GetNResources() != 2 * static_cast<size_t>(m_topology->GetNLinks()))
    {
        if (m_rates.GetNActiveFlows() > 0)
        {
            throw std::logic_error("FlowTransport: the topology grew under active flows");
        }
        BuildResources();
    }
    // The flow's number is its ECMP hash, as the packet level's flow id is: the same
    // sequence of sends takes the same paths on both transports.
    const uint64_t hash = m_flowCounter++;
    ++m_flowsStarted;
    const std::vector<ClusterTopology::Hop>& path =
        m_routes.Route(*m_topology, srcGpu, dstGpu, hash);
    if (path.empty())
    {
        // To itself: nothing crosses the network.
        ++m_flowsCompleted;
        if (onDelivered)
        {
            Simulator::ScheduleNow(std::move(onDelivered));
        }
        return;
    }

    m_pathResources.clear();
    for (const auto& hop : path)
    {
        m_pathResources.push_back(2 * hop.link + (hop.forward ? 0 : 1));
    }
    StartFlow(bytes, GetLoneFlowTime(path, bytes), std::move(onDelivered));
}

void FlowTransport::StartFlow(uint64_t bytes, Time loneTime, DeliveredCallback onDelivered)
{
    double bottleneckCap = std::numeric_limits<double>::infinity();
    for (uint32_t r : m_pathResources)
    {
        bottleneckCap = std::min(bottleneckCap, m_rates.GetCapacity(r));
    }
    const uint32_t id = m_rates.AddFlow(m_pathResources);
    if (id >= m_flows.size())
    {
        m_flows.resize(id + 1);
    }
    FlowState& f = m_flows[id];
    const uint64_t wire = GetWireBytes(bytes);
    f.remaining = static_cast<double>(wire);
    f.lastUpdate = Simulator::Now().GetTimeStep();
    // Alone on its path the flow drains in exactly DrainSteps(wire, bottleneckCap) (the rate
    // it gets is that capacity, bit for bit), so this tail makes its delivery the
    // packet-level instant.  Only TxTime's round-to-nearest can make it negative.
    const int64_t tail =
        loneTime.GetTimeStep() - DrainSteps(static_cast<double>(wire), bottleneckCap);
    f.tail = TimeStep(std::max<int64_t>(tail, 0));
    f.onDelivered = std::move(onDelivered);
    RequestUpdate();
}

uint32_t FlowTransport::SwitchLink(uint32_t gpu, uint32_t sw) const
{
    const uint32_t node = m_topology->GetGpuNode(gpu);
    for (uint32_t link : m_topology->GetAdjacentLinks(node))
    {
        const ClusterTopology::Link& l = m_topology->GetLink(link);
        if ((l.a == node && l.b == sw) || (l.b == node && l.a == sw))
        {
            return link;
        }
    }
    return UINT32_MAX;
}

void FlowTransport::SendThroughSwitch(const std::vector<uint32_t>& srcGpus,
                                      const std::vector<uint32_t>& dstGpus, uint64_t bytes,
                                      DeliveredCallback onDelivered)
{
    NS_LOG_FUNCTION(this << srcGpus.size() << dstGpus.size() << bytes);
    if (!m_topology)
    {
        throw std::logic_error("FlowTransport::SendThroughSwitch before SetTopology");
    }
    if (srcGpus.empty() || dstGpus.empty())
    {
        throw std::invalid_argument("FlowTransport::SendThroughSwitch: no source or destination");
    }
    if (m_rates.GetNResources() != 2 * static_cast<size_t>(m_topology->GetNLinks()))
    {
        if (m_rates.GetNActiveFlows() > 0)
        {
            throw std::logic_error("FlowTransport: the topology grew under active flows");
        }
        BuildResources();
    }
    // The switch: a forwarding node that the first source's links reach directly and that
    // every other member reaches directly too (an NVSwitch; a PCIe switch has no SHARP, but
    // the NCCL model only offers NVLS where the scenario says the node has it).
    const uint32_t first = m_topology->GetGpuNode(srcGpus.front());
    uint32_t sw = UINT32_MAX;
    for (uint32_t link : m_topology->GetAdjacentLinks(first))
    {
        const ClusterTopology::Link& l = m_topology->GetLink(link);
        const uint32_t other = l.a == first ? l.b : l.a;
        if (m_topology->GetNode(other).kind != ClusterTopology::NodeKind::Switch)
        {
            continue;
        }
        bool everyone = true;
        for (const auto* group : {&srcGpus, &dstGpus})
        {
            for (uint32_t g : *group)
            {
                everyone = everyone && SwitchLink(g, other) != UINT32_MAX;
            }
        }
        if (everyone)
        {
            sw = other;
            break;
        }
    }
    if (sw == UINT32_MAX)
    {
        std::string names;
        for (const auto* group : {&srcGpus, &dstGpus})
        {
            for (uint32_t g : *group)
            {
                names += (names.empty() ? "" : ", ") + std::to_string(g);
            }
        }
        throw std::invalid_argument("NVLS: GPUs " + names +
                                    " do not share a switch they are all linked to directly");
    }
    ++m_flowCounter; // one flow number per send, as Send, so later ECMP hashes stay aligned
    ++m_flowsStarted;
    m_pathResources.clear();
    auto resource = [&](uint32_t gpu, bool up)
    {
        const uint32_t link = SwitchLink(gpu, sw);
        const bool gpuIsA = m_topology->GetLink(link).a == m_topology->GetGpuNode(gpu);
        // forward (resource 2*link) runs a -> b
        const bool forward = up == gpuIsA;
        return ClusterTopology::Hop{link, forward};
    };
    std::vector<ClusterTopology::Hop> lone;
    for (uint32_t g : srcGpus)
    {
        const ClusterTopology::Hop h = resource(g, true);
        m_pathResources.push_back(2 * h.link + (h.forward ? 0 : 1));
        if (lone.empty())
        {
            lone.push_back(h);
        }
    }
    for (uint32_t g : dstGpus)
    {
        const ClusterTopology::Hop h = resource(g, false);
        m_pathResources.push_back(2 * h.link + (h.forward ? 0 : 1));
        if (lone.size() == 1)
        {
            lone.push_back(h);
        }
    }
    StartFlow(bytes, GetLoneFlowTime(lone, bytes), std::move(onDelivered));
}

void FlowTransport::RequestUpdate()
{
    // Everything that starts or ends at this instant is recomputed together, once, after the
    // events already queued for the instant.
    if (!m_updatePending)
    {
        m_updatePending = true;
        m_updateEvent = Simulator::ScheduleNow(&FlowTransport::Update, this);
    }
}

void FlowTransport::Update()
{
    m_updatePending = false;
    ++m_recomputations;
    if (!m_rates.Recompute(m_changes))
    {
        return;
    }
    ApplyRates();
    m_completions.SyncEvent();
}

void FlowTransport::ApplyRates()
{
    const int64_t now = Simulator::Now().GetTimeStep();
    for (const auto& [id, oldRate] : m_changes)
    {
        FlowState& f = m_flows[id];
        if (oldRate != 0)
        {
            f.remaining =
                std::max(0.0, f.remaining - oldRate * static_cast<double>(now - f.lastUpdate));
            ++m_rateChanges;
        }
        f.lastUpdate = now;
        m_completions.Schedule(id, now + DrainSteps(f.remaining, m_rates.GetRate(id)));
    }
}

void FlowTransport::CompleteDue()
{
    const int64_t now = Simulator::Now().GetTimeStep();
    for (uint32_t id = m_completions.PopDue(now); id != FlowCompletionQueue::kNone;
         id = m_completions.PopDue(now))
    {
        FlowFinished(id);
    }
    // Recompute at once rather than through one more event: every flow ending now is known,
    // and Sends already made at this instant are folded in too.
    m_updateEvent.Cancel();
    Update();
    m_completions.SyncEvent();
}

void FlowTransport::FlowFinished(uint32_t id)
{
    NS_LOG_FUNCTION(this << id);
    m_rates.RemoveFlow(id);
    ++m_flowsCompleted;
    FlowState& f = m_flows[id];
    if (f.onDelivered)
    {
        Simulator::Schedule(f.tail, std::move(f.onDelivered));
        f.onDelivered = nullptr;
    }
}

double FlowTransport::CheckMaxMinFair() const
{
    if (m_updatePending)
    {
        return -1;
    }
    return m_rates.CheckMaxMinFair();
}

} // namespace ns3
