#include "flow-transport.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowTransport");
NS_OBJECT_ENSURE_REGISTERED(FlowTransport);

namespace
{

/// Relative slack when comparing rates and loads: float sums of shares are not exact.
constexpr double kTol = 1e-9;

} // namespace

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

FlowTransport::FlowTransport()
{
    NS_LOG_FUNCTION(this);
}

FlowTransport::~FlowTransport() = default;

void FlowTransport::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // Pending events call back into this object through a raw pointer.
    m_finishEvent.Cancel();
    m_updateEvent.Cancel();
    m_updatePending = false;
    m_flows.clear();
    m_flowRes.clear();
    m_flowSlots.clear();
    m_nActive = 0;
    m_finishHeap.clear();
    m_resources.clear();
    m_freeFlows.clear();
    m_newFlows.clear();
    m_dirtyResources.clear();
    m_topology = nullptr;
    PhantoraTransport::DoDispose();
}

void FlowTransport::SetTopology(Ptr<ClusterTopology> topology)
{
    NS_ABORT_MSG_IF(m_nActive > 0, "FlowTransport: cannot change the topology under active flows");
    m_topology = topology;
    m_resources.clear();
    m_txCache.clear();
    m_routeDags.clear();
    m_dagNodes.clear();
    m_dagHops.clear();
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
    NS_ABORT_MSG_IF(m_nActive > 0, "FlowTransport::SetFlowNumbering with flows in flight");
    m_flowCounter = flowsSent;
}

uint64_t FlowTransport::GetPacketCount(uint64_t bytes) const
{
    NS_ABORT_MSG_IF(m_mtu <= m_headerBytes, "FlowTransport: Mtu (" << m_mtu
                                                                   << ") must exceed HeaderBytes ("
                                                                   << m_headerBytes << ")");
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

uint32_t FlowTransport::ResolveAlias(uint32_t r) const
{
    while (m_resources[r].alias != kNone)
    {
        r = m_resources[r].alias;
    }
    return r;
}

uint32_t FlowTransport::GetNActiveFlows(uint32_t link, bool forward) const
{
    const size_t r = 2 * static_cast<size_t>(link) + (forward ? 0 : 1);
    if (r >= m_resources.size())
    {
        return 0;
    }
    return static_cast<uint32_t>(m_resources[ResolveAlias(r)].flows.size());
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
    m_resources.assign(2 * static_cast<size_t>(nLinks), Resource{});
    for (uint32_t l = 0; l < nLinks; ++l)
    {
        const double cap =
            static_cast<double>(m_topology->GetLink(l).rate.GetBitRate()) / 8.0 / stepsPerSecond;
        m_resources[2 * l].capacity = cap;
        m_resources[2 * l + 1].capacity = cap;
    }
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
            if (m_resources[in].capacity <= m_resources[out].capacity)
            {
                m_resources[out].alias = in;
            }
            else
            {
                m_resources[in].alias = out;
            }
        }
    }
}

void FlowTransport::Restride(uint32_t stride)
{
    std::vector<uint32_t> res(m_flows.size() * stride);
    std::vector<uint32_t> slots(m_flows.size() * stride);
    for (size_t id = 0; id < m_flows.size(); ++id)
    {
        std::copy_n(m_flowRes.begin() + id * m_stride, m_flows[id].nRes, res.begin() + id * stride);
        std::copy_n(m_flowSlots.begin() + id * m_stride, m_flows[id].nRes,
                    slots.begin() + id * stride);
    }
    m_flowRes = std::move(res);
    m_flowSlots = std::move(slots);
    m_stride = stride;
}

void FlowTransport::FillRoute(uint32_t srcGpu, uint32_t dstGpu, uint64_t flowHash)
{
    // Bounds the cache for traffic that touches very many pairs (all-to-all on a big
    // cluster); past it, routes come from the topology directly.
    constexpr size_t kMaxCachedHops = size_t{1} << 22;
    const uint64_t key = (static_cast<uint64_t>(srcGpu) << 32) | dstGpu;
    auto it = m_routeDags.find(key);
    if (it == m_routeDags.end())
    {
        if (m_dagHops.size() >= kMaxCachedHops)
        {
            m_path = m_topology->Route(srcGpu, dstGpu, flowHash);
            return;
        }
        // Breadth-first over the next-hop sets: DagNodes are numbered in the order they are
        // found, which is the order they are filled in.
        const auto base = static_cast<uint32_t>(m_dagNodes.size());
        m_dagIndexOf.resize(m_topology->GetNNodes(), kNone);
        std::vector<uint32_t> order{m_topology->GetGpuNode(srcGpu)};
        m_dagIndexOf[order[0]] = base;
        for (size_t k = 0; k < order.size(); ++k)
        {
            const auto& hops = m_topology->NextHops(order[k], dstGpu);
            m_dagNodes.push_back({static_cast<uint32_t>(m_dagHops.size()),
                                  static_cast<uint32_t>(hops.size()), order[k]});
            for (const auto& hop : hops)
            {
                const uint32_t next = m_topology->HopTarget(hop);
                if (m_dagIndexOf[next] == kNone)
                {
                    m_dagIndexOf[next] = base + static_cast<uint32_t>(order.size());
                    order.push_back(next);
                }
                m_dagHops.push_back({hop, m_dagIndexOf[next]});
            }
        }
        for (uint32_t v : order)
        {
            m_dagIndexOf[v] = kNone;
        }
        it = m_routeDags.emplace(key, base).first;
    }
    // The walk of ClusterTopology::Route (GetRoute is tested against it).
    m_path.clear();
    for (uint32_t n = it->second; m_dagNodes[n].nHops != 0;)
    {
        const DagNode& dn = m_dagNodes[n];
        const DagHop& dh =
            m_dagHops[dn.hopsBegin + ClusterTopology::EcmpIndex(flowHash, dn.node, dn.nHops)];
        m_path.push_back(dh.hop);
        n = dh.next;
    }
}

std::vector<ClusterTopology::Hop> FlowTransport::GetRoute(uint32_t srcGpu, uint32_t dstGpu,
                                                          uint64_t flowHash)
{
    NS_ABORT_MSG_IF(!m_topology, "FlowTransport::GetRoute before SetTopology");
    FillRoute(srcGpu, dstGpu, flowHash);
    return m_path;
}

void FlowTransport::Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
                         DeliveredCallback onDelivered)
{
    NS_LOG_FUNCTION(this << srcGpu << dstGpu << bytes);
    NS_ABORT_MSG_IF(!m_topology, "FlowTransport::Send before SetTopology");
    if (m_resources.size() != 2 * static_cast<size_t>(m_topology->GetNLinks()))
    {
        NS_ABORT_MSG_IF(m_nActive > 0, "FlowTransport: the topology grew under active flows");
        BuildResources();
    }
    // The flow's number is its ECMP hash, as the packet level's flow id is: the same
    // sequence of sends takes the same paths on both transports.
    const uint64_t hash = m_flowCounter++;
    ++m_flowsStarted;
    FillRoute(srcGpu, dstGpu, hash);
    const std::vector<ClusterTopology::Hop>& path = m_path;
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

    uint32_t id;
    if (m_freeFlows.empty())
    {
        id = static_cast<uint32_t>(m_flows.size());
        m_flows.emplace_back();
    }
    else
    {
        id = m_freeFlows.back();
        m_freeFlows.pop_back();
    }
    if (path.size() > m_stride)
    {
        Restride(static_cast<uint32_t>(path.size()));
    }
    if (m_flowRes.size() < m_flows.size() * m_stride)
    {
        m_flowRes.resize(m_flows.size() * m_stride);
        m_flowSlots.resize(m_flows.size() * m_stride);
    }
    Flow& f = m_flows[id];
    f.nRes = 0;
    double bottleneckCap = std::numeric_limits<double>::infinity();
    for (const auto& hop : path)
    {
        const uint32_t r = 2 * hop.link + (hop.forward ? 0 : 1);
        Resource& res = m_resources[r];
        bottleneckCap = std::min(bottleneckCap, res.capacity);
        if (res.alias == kNone)
        {
            res.flows.push_back({id, f.nRes});
            m_flowRes[static_cast<size_t>(id) * m_stride + f.nRes] = r;
            SlotOf(id, f.nRes) = static_cast<uint32_t>(res.flows.size() - 1);
            ++f.nRes;
        }
    }
    const uint64_t wire = GetWireBytes(bytes);
    f.remaining = static_cast<double>(wire);
    f.rate = 0;
    f.lastUpdate = Simulator::Now().GetTimeStep();
    f.bottleneck = kNone;
    // Alone on its path the flow drains in exactly DrainSteps(wire, bottleneckCap) (the rate
    // it gets is that capacity, bit for bit), so this tail makes its delivery the
    // packet-level instant.  Only TxTime's round-to-nearest can make it negative.
    const int64_t tail = GetLoneFlowTime(path, bytes).GetTimeStep() -
                         DrainSteps(static_cast<double>(wire), bottleneckCap);
    f.tail = TimeStep(std::max<int64_t>(tail, 0));
    f.onDelivered = std::move(onDelivered);
    f.active = true;
    ++m_nActive;
    m_newFlows.push_back(id);
    RequestUpdate();
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

void FlowTransport::HeapUpdate(uint32_t flow)
{
    // One ns-3 event for the earliest completion instead of one per flow: a rate change then
    // costs a sift here rather than a cancelled event plus a new one in the simulator.  The
    // keys live in the heap itself, so sifting never reads the flows.
    const Flow& f = m_flows[flow];
    const FinishItem item{f.finishStep, f.finishSeq, flow};
    uint32_t pos = f.heapPos;
    if (pos == kNone)
    {
        pos = static_cast<uint32_t>(m_finishHeap.size());
        m_finishHeap.push_back(item);
    }
    while (pos > 0 && item < m_finishHeap[(pos - 1) / 2])
    {
        m_finishHeap[pos] = m_finishHeap[(pos - 1) / 2];
        m_flows[m_finishHeap[pos].flow].heapPos = pos;
        pos = (pos - 1) / 2;
    }
    const auto n = static_cast<uint32_t>(m_finishHeap.size());
    while (true)
    {
        uint32_t child = 2 * pos + 1;
        if (child >= n)
        {
            break;
        }
        if (child + 1 < n && m_finishHeap[child + 1] < m_finishHeap[child])
        {
            ++child;
        }
        if (!(m_finishHeap[child] < item))
        {
            break;
        }
        m_finishHeap[pos] = m_finishHeap[child];
        m_flows[m_finishHeap[pos].flow].heapPos = pos;
        pos = child;
    }
    m_finishHeap[pos] = item;
    m_flows[flow].heapPos = pos;
}

uint32_t FlowTransport::HeapPop()
{
    const uint32_t top = m_finishHeap.front().flow;
    const uint32_t last = m_finishHeap.back().flow;
    m_finishHeap.pop_back();
    m_flows[top].heapPos = kNone;
    if (last != top)
    {
        m_flows[last].heapPos = 0;
        HeapUpdate(last);
    }
    return top;
}

void FlowTransport::SyncFinishEvent()
{
    const int64_t next = m_finishHeap.empty() ? -1 : m_finishHeap.front().step;
    if (next == m_finishEventStep)
    {
        return;
    }
    m_finishEvent.Cancel();
    m_finishEventStep = next;
    if (next >= 0)
    {
        m_finishEvent = Simulator::Schedule(TimeStep(next - Simulator::Now().GetTimeStep()),
                                            &FlowTransport::OnFinishEvent, this);
    }
}

void FlowTransport::OnFinishEvent()
{
    const int64_t now = Simulator::Now().GetTimeStep();
    m_finishEventStep = -1;
    while (!m_finishHeap.empty() && m_finishHeap.front().step <= now)
    {
        FlowFinished(HeapPop());
    }
    // Recompute at once rather than through one more event: every flow ending now is known,
    // and Sends already made at this instant are folded in too.
    m_updateEvent.Cancel();
    Update();
    SyncFinishEvent();
}

void FlowTransport::SetBottleneck(uint32_t id, uint32_t r)
{
    Flow& f = m_flows[id];
    if (f.bottleneck != kNone)
    {
        Resource& old = m_resources[f.bottleneck];
        --old.nBottlenecked;
        (f.bPrev == kNone ? old.bottleneckHead : m_flows[f.bPrev].bNext) = f.bNext;
        if (f.bNext != kNone)
        {
            m_flows[f.bNext].bPrev = f.bPrev;
        }
    }
    f.bottleneck = r;
    f.bPrev = kNone;
    f.bNext = kNone;
    if (r != kNone)
    {
        Resource& res = m_resources[r];
        ++res.nBottlenecked;
        f.bNext = res.bottleneckHead;
        if (f.bNext != kNone)
        {
            m_flows[f.bNext].bPrev = id;
        }
        res.bottleneckHead = id;
    }
}

void FlowTransport::FlowFinished(uint32_t id)
{
    NS_LOG_FUNCTION(this << id);
    SetBottleneck(id, kNone);
    Flow& f = m_flows[id];
    const std::span<const uint32_t> path = ResOf(id);
    for (uint32_t h = 0; h < f.nRes; ++h)
    {
        Resource& res = m_resources[path[h]];
        const Entry moved = res.flows.back();
        res.flows[SlotOf(id, h)] = moved;
        SlotOf(moved.flow, moved.hop) = SlotOf(id, h);
        res.flows.pop_back();
        res.load -= f.rate;
        if (res.flows.empty())
        {
            // An idle link forgets the rounding its running sum collected.
            res.load = 0;
            res.maxUpper = 0;
        }
        if (!res.dirty)
        {
            res.dirty = true;
            m_dirtyResources.push_back(path[h]);
        }
    }
    f.active = false;
    f.rate = 0;
    --m_nActive;
    ++m_flowsCompleted;
    if (f.onDelivered)
    {
        Simulator::Schedule(f.tail, std::move(f.onDelivered));
        f.onDelivered = nullptr;
    }
    m_freeFlows.push_back(id);
}

void FlowTransport::Release(uint32_t id)
{
    Flow& f = m_flows[id];
    if (f.released != m_pass)
    {
        f.released = m_pass;
        m_released.push_back(id);
    }
}

void FlowTransport::ReleaseBottlenecked(uint32_t r)
{
    // Lists do not change within a recomputation, so once is enough.
    Resource& res = m_resources[r];
    if (res.bottleneckReleased == m_pass)
    {
        return;
    }
    res.bottleneckReleased = m_pass;
    for (uint32_t id = res.bottleneckHead; id != kNone; id = m_flows[id].bNext)
    {
        Release(id);
    }
}

void FlowTransport::Update()
{
    m_updatePending = false;
    ++m_recomputations;
    ++m_pass;
    m_released.clear();
    for (uint32_t id : m_newFlows)
    {
        Release(id);
        // Whatever share a newcomer gets on a saturated link comes out of the flows
        // bottlenecked there: releasing them now spares a validation round.
        for (uint32_t r : ResOf(id))
        {
            ReleaseBottlenecked(r);
        }
    }
    m_newFlows.clear();
    // A departure frees capacity only for the flows it was the bottleneck of; anyone else
    // gains from it only through them, which validation catches.
    for (uint32_t r : m_dirtyResources)
    {
        m_resources[r].dirty = false;
        ReleaseBottlenecked(r);
    }
    m_dirtyResources.clear();
    if (m_released.empty())
    {
        return;
    }
    do
    {
        Fill();
    } while (Validate());
    Apply();
}

void FlowTransport::Freeze(uint32_t i, double rate, uint32_t j)
{
    LocalFlow& lf = m_localFlows[i];
    lf.frozen = true;
    --m_unfrozen;
    lf.newRate = rate;
    lf.bottleneck = j;
    const uint32_t* hops = m_localHops.data() + lf.hopsBegin;
    const uint32_t* end = m_localHops.data() + m_localFlows[i + 1].hopsBegin;
    for (; hops != end; ++hops)
    {
        LocalResource& lr = m_localRes[*hops];
        lr.residual -= rate;
        --lr.count;
    }
    m_localRes[j].minFrozen = std::min(m_localRes[j].minFrozen, rate);
}

void FlowTransport::Fill()
{
    // Progressive filling of the released flows; the others hold their rates and only
    // shrink the capacity left on the links they share.  Everything here costs in the
    // released flows' hops, never in how many flows a link carries.
    ++m_touchPass;
    m_touched.clear();
    m_localRes.clear();
    m_localHops.clear();
    const auto nf = static_cast<uint32_t>(m_released.size());
    m_localFlows.resize(nf + 1); // one past the end marks where the last flow's hops end
    for (uint32_t i = 0; i < nf; ++i)
    {
        const Flow& f = m_flows[m_released[i]];
        m_localFlows[i].hopsBegin = static_cast<uint32_t>(m_localHops.size());
        m_localFlows[i].frozen = false;
        for (uint32_t r : ResOf(m_released[i]))
        {
            Resource& res = m_resources[r];
            if (res.touched != m_touchPass)
            {
                res.touched = m_touchPass;
                res.local = static_cast<uint32_t>(m_touched.size());
                m_touched.push_back(r);
                m_localRes.push_back({0, 0, std::numeric_limits<double>::infinity(), 0, 0, 0, 0});
            }
            LocalResource& lr = m_localRes[res.local];
            ++lr.nReleased;
            lr.oldRates += f.rate;
            lr.nBottReleased += f.bottleneck == r ? 1 : 0;
            m_localHops.push_back(res.local);
        }
    }
    m_localFlows[nf].hopsBegin = static_cast<uint32_t>(m_localHops.size());
    uint32_t offset = 0;
    m_heap.clear();
    for (uint32_t j = 0; j < m_touched.size(); ++j)
    {
        const Resource& res = m_resources[m_touched[j]];
        LocalResource& lr = m_localRes[j];
        lr.flowsBegin = offset;
        offset += lr.nReleased;
        // With every flow released the link is all free: exact, where the running sum
        // minus the released rates would leave float dust.
        const double held =
            lr.nReleased == res.flows.size() ? 0.0 : std::max(0.0, res.load - lr.oldRates);
        lr.residual = res.capacity - held;
    }
    m_localResFlows.resize(offset);
    for (uint32_t i = 0; i < nf; ++i)
    {
        for (uint32_t h = m_localFlows[i].hopsBegin; h < m_localFlows[i + 1].hopsBegin; ++h)
        {
            LocalResource& lr = m_localRes[m_localHops[h]];
            m_localResFlows[lr.flowsBegin + lr.count++] = i;
        }
    }
    for (uint32_t j = 0; j < m_touched.size(); ++j)
    {
        m_heap.push_back({std::max(m_localRes[j].residual, 0.0) / m_localRes[j].nReleased, j});
    }
    auto later = [](const HeapItem& a, const HeapItem& b) { return a.share > b.share; };
    std::make_heap(m_heap.begin(), m_heap.end(), later);
    // Once every flow is frozen the links left in the heap have nothing to decide.
    m_unfrozen = nf;
    while (m_unfrozen > 0)
    {
        std::pop_heap(m_heap.begin(), m_heap.end(), later);
        const HeapItem item = m_heap.back();
        m_heap.pop_back();
        const LocalResource& lr = m_localRes[item.resource];
        if (lr.count == 0)
        {
            continue;
        }
        // Freezing flows at the smallest share only ever raises the other links' shares, so
        // a stored share is a lower bound: re-queue it when it has grown, instead of
        // updating the heap on every freeze.
        const double share = std::max(lr.residual, 0.0) / lr.count;
        if (share > item.share * (1 + 1e-12))
        {
            m_heap.push_back({share, item.resource});
            std::push_heap(m_heap.begin(), m_heap.end(), later);
            continue;
        }
        FreezeAll(item.resource, share);
    }
}

void FlowTransport::FreezeAll(uint32_t j, double share)
{
    const LocalResource& lr = m_localRes[j];
    for (uint32_t k = lr.flowsBegin; k < lr.flowsBegin + lr.nReleased; ++k)
    {
        const uint32_t i = m_localResFlows[k];
        if (!m_localFlows[i].frozen)
        {
            Freeze(i, share, j);
        }
    }
}

void FlowTransport::CollectBottlenecked(uint32_t r)
{
    Resource& res = m_resources[r];
    if (res.bottleneckReleased == m_pass)
    {
        return;
    }
    res.bottleneckReleased = m_pass;
    for (uint32_t id = res.bottleneckHead; id != kNone; id = m_flows[id].bNext)
    {
        if (m_flows[id].released != m_pass)
        {
            m_violators.push_back(id);
        }
    }
}

bool FlowTransport::Validate()
{
    // Max-min fair <=> every flow crosses a saturated link on which no flow is faster.  The
    // released flows have one by construction, except against faster held flows; held flows
    // keep theirs unless it is one of the links the released flows changed.  The held flows
    // bottlenecked on a link all run at its level, the fastest there, so both tests need a
    // link's flow list only when they fail or cannot decide from the link's summary.
    m_violators.clear();
    for (uint32_t j = 0; j < m_touched.size(); ++j)
    {
        const uint32_t r = m_touched[j];
        Resource& res = m_resources[r];
        const LocalResource& lr = m_localRes[j];
        if (lr.nReleased == res.flows.size())
        {
            continue;
        }
        // a held flow faster than a released one that this link froze
        if (res.maxUpper > lr.minFrozen * (1 + kTol) && res.nBottlenecked > lr.nBottReleased &&
            res.level > lr.minFrozen * (1 + kTol))
        {
            // The fastest held flows are the ones bottlenecked here: release them first, and
            // others only if the link's new level still falls below them next round.
            CollectBottlenecked(r);
        }
        else if (res.maxUpper > lr.minFrozen * (1 + kTol))
        {
            double fastest = 0;
            for (const Entry& e : res.flows)
            {
                const Flow& g = m_flows[e.flow];
                fastest = std::max(fastest, g.rate);
                if (g.released != m_pass && g.rate > lr.minFrozen * (1 + kTol))
                {
                    m_violators.push_back(e.flow);
                }
            }
            res.maxUpper = fastest;
        }
        // held flows that lost this link as their bottleneck
        if (res.nBottlenecked > lr.nBottReleased)
        {
            double newRates = 0;
            double fastestReleased = 0;
            for (uint32_t k = lr.flowsBegin; k < lr.flowsBegin + lr.nReleased; ++k)
            {
                const double rate = m_localFlows[m_localResFlows[k]].newRate;
                newRates += rate;
                fastestReleased = std::max(fastestReleased, rate);
            }
            const double load = std::max(0.0, res.load - lr.oldRates) + newRates;
            if (load < res.capacity * (1 - kTol) || fastestReleased > res.level * (1 + kTol))
            {
                CollectBottlenecked(r);
            }
        }
    }
    if (m_violators.empty())
    {
        for (uint32_t i = 0; i < m_released.size(); ++i)
        {
            Flow& f = m_flows[m_released[i]];
            f.newRate = m_localFlows[i].newRate;
            f.newBottleneck = m_touched[m_localFlows[i].bottleneck];
        }
        return false;
    }
    for (uint32_t id : m_violators)
    {
        Release(id);
    }
    // A violator's rate moves, and on a saturated link that moves the flows bottlenecked
    // there too: releasing them now spares the next validation round.
    for (uint32_t id : m_violators)
    {
        for (uint32_t r : ResOf(id))
        {
            ReleaseBottlenecked(r);
        }
    }
    return true;
}

void FlowTransport::Apply()
{
    const int64_t now = Simulator::Now().GetTimeStep();
    for (uint32_t id : m_released)
    {
        Flow& f = m_flows[id];
        if (f.bottleneck != f.newBottleneck)
        {
            SetBottleneck(id, f.newBottleneck);
        }
        const bool fresh = f.rate == 0;
        if (fresh || std::abs(f.newRate - f.rate) > kTol * f.rate)
        {
            NS_ABORT_MSG_IF(!(f.newRate > 0), "FlowTransport: a flow was allocated no bandwidth");
            for (uint32_t r : ResOf(id))
            {
                Resource& res = m_resources[r];
                res.load += f.newRate - f.rate;
                res.maxUpper = std::max(res.maxUpper, f.newRate);
            }
            if (!fresh)
            {
                f.remaining =
                    std::max(0.0, f.remaining - f.rate * static_cast<double>(now - f.lastUpdate));
                ++m_rateChanges;
            }
            f.lastUpdate = now;
            f.rate = f.newRate;
            f.finishStep = now + DrainSteps(f.remaining, f.rate);
            f.finishSeq = ++m_finishSeq;
            HeapUpdate(id);
        }
        m_resources[f.bottleneck].level = f.rate;
    }
    SyncFinishEvent();
}

double FlowTransport::CheckMaxMinFair() const
{
    if (m_updatePending)
    {
        return -1;
    }
    // Deliberately the textbook algorithm over every link of every path, sharing no code or
    // shortcut with the incremental one.
    std::vector<double> residual(m_resources.size());
    std::vector<std::vector<uint32_t>> flowsOn(m_resources.size());
    for (size_t r = 0; r < m_resources.size(); ++r)
    {
        residual[r] = m_resources[r].capacity;
    }
    std::vector<std::vector<uint32_t>> paths(m_flows.size());
    for (uint32_t i = 0; i < m_flows.size(); ++i)
    {
        if (!m_flows[i].active)
        {
            continue;
        }
        // every resource of the path, the aliased ones included
        for (uint32_t r : ResOf(i))
        {
            paths[i].push_back(r);
        }
        for (uint32_t r = 0; r < m_resources.size(); ++r)
        {
            if (m_resources[r].alias != kNone)
            {
                const uint32_t rep = ResolveAlias(r);
                if (std::find(paths[i].begin(), paths[i].end(), rep) != paths[i].end())
                {
                    paths[i].push_back(r);
                }
            }
        }
        for (uint32_t r : paths[i])
        {
            flowsOn[r].push_back(i);
        }
    }
    std::vector<uint32_t> count(m_resources.size());
    for (size_t r = 0; r < m_resources.size(); ++r)
    {
        count[r] = static_cast<uint32_t>(flowsOn[r].size());
    }
    std::vector<double> rate(m_flows.size(), -1);
    while (true)
    {
        size_t best = m_resources.size();
        double bestShare = 0;
        for (size_t r = 0; r < m_resources.size(); ++r)
        {
            if (count[r] > 0 && (best == m_resources.size() || residual[r] / count[r] < bestShare))
            {
                best = r;
                bestShare = residual[r] / count[r];
            }
        }
        if (best == m_resources.size())
        {
            break;
        }
        for (uint32_t i : flowsOn[best])
        {
            if (rate[i] < 0)
            {
                rate[i] = bestShare;
                for (uint32_t q : paths[i])
                {
                    residual[q] -= bestShare;
                    --count[q];
                }
            }
        }
    }
    double worst = 0;
    for (size_t i = 0; i < m_flows.size(); ++i)
    {
        if (m_flows[i].active)
        {
            worst = std::max(worst, std::abs(m_flows[i].rate - rate[i]) / rate[i]);
        }
    }
    return worst;
}

} // namespace ns3
