#include "max-min-fair-share.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace ns3
{

namespace
{

/// Relative slack when comparing rates and loads: float sums of shares are not exact.
constexpr double kTol = 1e-9;

} // namespace

void MaxMinFairShare::SetResources(const std::vector<double>& capacities)
{
    m_resources.assign(capacities.size(), Resource{});
    for (size_t r = 0; r < capacities.size(); ++r)
    {
        m_resources[r].capacity = capacities[r];
    }
}

void MaxMinFairShare::SetAlias(uint32_t r, uint32_t to)
{
    m_resources[r].alias = to;
}

uint32_t MaxMinFairShare::ResolveAlias(uint32_t r) const
{
    while (m_resources[r].alias != kNone)
    {
        r = m_resources[r].alias;
    }
    return r;
}

uint32_t MaxMinFairShare::GetNFlowsOn(uint32_t r) const
{
    return static_cast<uint32_t>(m_resources[ResolveAlias(r)].flows.size());
}

void MaxMinFairShare::Restride(uint32_t stride)
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

uint32_t MaxMinFairShare::AddFlow(std::span<const uint32_t> path)
{
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
    for (const uint32_t r : path)
    {
        Resource& res = m_resources[r];
        if (res.alias == kNone)
        {
            res.flows.push_back({id, f.nRes});
            m_flowRes[static_cast<size_t>(id) * m_stride + f.nRes] = r;
            SlotOf(id, f.nRes) = static_cast<uint32_t>(res.flows.size() - 1);
            ++f.nRes;
        }
    }
    f.rate = 0;
    f.bottleneck = kNone;
    f.active = true;
    ++m_nActive;
    m_newFlows.push_back(id);
    return id;
}

void MaxMinFairShare::RemoveFlow(uint32_t id)
{
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
    m_freeFlows.push_back(id);
}

void MaxMinFairShare::Release(uint32_t id)
{
    Flow& f = m_flows[id];
    if (f.released != m_pass)
    {
        f.released = m_pass;
        m_released.push_back(id);
    }
}

void MaxMinFairShare::ReleaseBottlenecked(uint32_t r)
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

bool MaxMinFairShare::Recompute(std::vector<RateChange>& changed)
{
    ++m_pass;
    m_released.clear();
    for (uint32_t id : m_newFlows)
    {
        if (!m_flows[id].active)
        {
            continue; // removed again before it ever had a rate
        }
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
        return false;
    }
    do
    {
        Fill();
    } while (Validate());
    Apply(changed);
    return true;
}

void MaxMinFairShare::Freeze(uint32_t i, double rate, uint32_t j)
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

void MaxMinFairShare::Fill()
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

void MaxMinFairShare::FreezeAll(uint32_t j, double share)
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

void MaxMinFairShare::CollectBottlenecked(uint32_t r)
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

bool MaxMinFairShare::Validate()
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

void MaxMinFairShare::Apply(std::vector<RateChange>& changed)
{
    changed.clear();
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
            assert(f.newRate > 0 && "a flow was allocated no bandwidth");
            for (uint32_t r : ResOf(id))
            {
                Resource& res = m_resources[r];
                res.load += f.newRate - f.rate;
                res.maxUpper = std::max(res.maxUpper, f.newRate);
            }
            changed.push_back({id, f.rate});
            f.rate = f.newRate;
        }
        m_resources[f.bottleneck].level = f.rate;
    }
}

void MaxMinFairShare::SetBottleneck(uint32_t id, uint32_t r)
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

double MaxMinFairShare::CheckMaxMinFair() const
{
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

void MaxMinFairShare::Clear()
{
    m_resources.clear();
    m_flows.clear();
    m_flowRes.clear();
    m_flowSlots.clear();
    m_freeFlows.clear();
    m_newFlows.clear();
    m_dirtyResources.clear();
    m_nActive = 0;
}

} // namespace ns3
