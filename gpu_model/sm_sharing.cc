#include "sm_sharing.h"

#include <algorithm>
#include <cmath>

namespace phantora
{

namespace
{
/// Placed kernels remembered per stream: a collective is delayed by what runs at its
/// launch and slows what ran beside it, and the program's host may have placed a few
/// thousand kernels ahead of the GPU by the time a collective starts.
constexpr std::size_t kKernelsPerStream = 4096;
/// Finished collectives older than this (simulated) before the latest kernel start are
/// dropped; a kernel starting that far back is not slowed by them.
constexpr int64_t kForgetAfterNs = 50'000'000;
} // namespace

SmSharing::SmSharing(int32_t smCount) : m_sms(smCount > 0 ? static_cast<uint32_t>(smCount) : 0U) {}

double SmSharing::FreeSms(uint32_t held) const
{
    // At least one SM stays free: NCCL never takes them all.
    return static_cast<double>(m_sms - std::min(held, m_sms - 1));
}

double SmSharing::SmsNeeded(uint64_t ctas) const
{
    return static_cast<double>(std::min<uint64_t>(std::max<uint64_t>(ctas, 1), m_sms));
}

int64_t SmSharing::PersistentRounds(uint32_t held) const
{
    const auto free = static_cast<int64_t>(FreeSms(held));
    return (int64_t{m_sms} + free - 1) / free;
}

void SmSharing::AddCollective(uint64_t ticket, int64_t startNs, int64_t expectedEndNs,
                              uint32_t channels)
{
    if (!Enabled())
    {
        return;
    }
    auto [it, added] = m_collectives.try_emplace(ticket);
    Held& c = it->second;
    if (added)
    {
        c.knownFrom = m_placed;
    }
    c.startNs = startNs;
    c.endNs = std::max(startNs, expectedEndNs);
    c.channels = channels;
    c.finished = false;
}

void SmSharing::FinishCollective(uint64_t ticket, int64_t endNs)
{
    auto it = m_collectives.find(ticket);
    if (it == m_collectives.end())
    {
        return;
    }
    it->second.endNs = std::max(it->second.startNs, endNs);
    it->second.finished = true;
}

std::pair<uint32_t, int64_t> SmSharing::HeldAt(int64_t t) const
{
    uint32_t held = 0;
    int64_t next = std::numeric_limits<int64_t>::max();
    for (const auto& [ticket, c] : m_collectives)
    {
        if (c.startNs <= t && t < c.endNs)
        {
            held += c.channels;
            next = std::min(next, c.endNs);
        }
        else if (c.startNs > t)
        {
            next = std::min(next, c.startNs);
        }
    }
    return {held, next};
}

int64_t SmSharing::KernelEnd(int64_t startNs, int64_t durationNs, uint64_t ctas) const
{
    if (!Enabled() || durationNs <= 0 || m_collectives.empty())
    {
        return startNs + std::max<int64_t>(durationNs, 0);
    }
    if (ctas == kPersistent)
    {
        return PersistentKernelEnd(startNs, durationNs);
    }
    // The kernel's work in ns at full speed, done at rate (free SMs / SMs it needs) while
    // collectives hold SMs.
    const double needs = SmsNeeded(ctas);
    double remaining = static_cast<double>(durationNs);
    double t = static_cast<double>(startNs);
    while (true)
    {
        const auto [held, next] = HeldAt(static_cast<int64_t>(std::floor(t)));
        const double rate = std::min(1.0, FreeSms(held) / needs);
        if (next == std::numeric_limits<int64_t>::max() ||
            t + remaining / rate <= static_cast<double>(next))
        {
            return static_cast<int64_t>(std::llround(t + remaining / rate));
        }
        remaining -= (static_cast<double>(next) - t) * rate;
        t = static_cast<double>(next);
    }
}

int64_t SmSharing::PersistentKernelEnd(int64_t startNs, int64_t durationNs) const
{
    const auto [held, next] = HeldAt(startNs);
    if (held == 0)
    {
        return startNs + durationNs;
    }
    // S - C CTAs start now; the C others start when the collectives give their SMs back or
    // when the first CTAs are done (then S - C SMs free up at once), whichever comes first,
    // and each runs for the whole duration.  While the collectives hold their SMs
    // throughout, that takes ceil(S / (S - C)) rounds.
    const int64_t rounds = PersistentRounds(held);
    int64_t released = next;
    for (int64_t t = next; t != std::numeric_limits<int64_t>::max();)
    {
        const auto [h, n] = HeldAt(t);
        if (h == 0)
        {
            released = t;
            break;
        }
        released = n;
        t = n;
    }
    const int64_t throughout = startNs + rounds * durationNs;
    if (released == std::numeric_limits<int64_t>::max())
    {
        return throughout;
    }
    return std::min(throughout, std::max(startNs, released) + durationNs);
}

void SmSharing::AddKernel(uint64_t stream, int64_t startNs, int64_t endNs, uint64_t ctas)
{
    if (!Enabled())
    {
        return;
    }
    auto& recent = m_kernels[stream];
    recent.push_back({startNs, endNs, ctas, m_placed++});
    if (recent.size() > kKernelsPerStream)
    {
        recent.pop_front();
    }
    if (startNs > m_latestNs)
    {
        m_latestNs = startNs;
        Forget(startNs);
    }
}

int64_t SmSharing::CollectiveStart(uint64_t stream, int64_t readyNs, uint32_t channels) const
{
    if (!Enabled())
    {
        return readyNs;
    }
    // A kernel leaves room for the collective's CTAs only if it has fewer CTAs than the
    // SMs the collective does not need.  Only kernels already running when the collective
    // became launchable hold it back: the block scheduler dispatches pending kernels in
    // the order they became ready, so a kernel that starts later (the next GEMM of a
    // back-to-back stream) gets its SMs after the collective's CTAs, not before.  Measured
    // on 2 x H100 (bench/interference/README.md): a 256 MiB all-reduce beside a stream of
    // 4096^3 GEMMs takes x1.25, not the length of the whole GEMM stream.
    const uint64_t room = m_sms > channels ? m_sms - channels : 0;
    int64_t t = readyNs;
    for (bool moved = true; moved;)
    {
        moved = false;
        for (const auto& [id, recent] : m_kernels)
        {
            if (id == stream)
            {
                continue;
            }
            for (const Kernel& k : recent)
            {
                if (k.startNs < readyNs && k.startNs <= t && t < k.endNs && k.ctas > room)
                {
                    t = k.endNs;
                    moved = true;
                }
            }
        }
    }
    return t;
}

int64_t SmSharing::ExtraBeside(const Held& c, const Kernel& k) const
{
    const int64_t from = std::max(c.startNs, k.startNs);
    const int64_t to = std::min(c.endNs, k.endNs);
    if (to <= from)
    {
        return 0;
    }
    if (k.ctas == kPersistent)
    {
        // Only a kernel that starts while the collective holds its SMs lacks them (one
        // started before holds every SM, and the collective waits: CollectiveStart()).
        // As in PersistentKernelEnd(): its last CTAs start when the collective ends or
        // after the rounds the free SMs need, whichever comes first.
        if (c.startNs > k.startNs)
        {
            return 0;
        }
        return std::min((PersistentRounds(c.channels) - 1) * (k.endNs - k.startNs),
                        c.endNs - k.startNs);
    }
    const double needs = SmsNeeded(k.ctas);
    const double free = FreeSms(c.channels);
    if (needs <= free)
    {
        return 0;
    }
    // As KernelEnd() times it: the work left at `from` runs at free/needs of its speed
    // until the collective ends, the rest at full speed.
    const double rate = free / needs;
    const double work = static_cast<double>(k.endNs - from);
    const double window = static_cast<double>(c.endNs - from);
    if (work / rate <= window)
    {
        return std::llround(work / rate - work);
    }
    return std::llround(window * (1.0 - rate));
}

std::map<uint64_t, std::pair<int64_t, int64_t>> SmSharing::Reflow(uint64_t ticket, uint64_t stream)
{
    std::map<uint64_t, std::pair<int64_t, int64_t>> moved;
    auto it = m_collectives.find(ticket);
    if (!Enabled() || it == m_collectives.end() || it->second.reflowed)
    {
        return moved;
    }
    Held& c = it->second;
    c.reflowed = true;
    for (auto& [id, kernels] : m_kernels)
    {
        if (id == stream)
        {
            continue;
        }
        // Each kernel starts when it did or when the one before it now ends, whichever is
        // later, and takes what the collective costs it if it was placed before it.
        int64_t lastOldEnd = 0;
        int64_t previousNewEnd = std::numeric_limits<int64_t>::min();
        bool touched = false;
        for (Kernel& k : kernels)
        {
            if (!touched && k.endNs <= c.startNs)
            {
                continue;
            }
            touched = true;
            const int64_t duration = k.endNs - k.startNs;
            lastOldEnd = k.endNs;
            Kernel placed = k;
            placed.startNs = std::max(k.startNs, previousNewEnd);
            placed.endNs = placed.startNs + duration;
            if (k.number < c.knownFrom)
            {
                placed.endNs += ExtraBeside(c, placed);
            }
            k = placed;
            previousNewEnd = placed.endNs;
        }
        if (touched && previousNewEnd > lastOldEnd)
        {
            moved[id] = {lastOldEnd, previousNewEnd};
        }
    }
    return moved;
}

void SmSharing::Forget(int64_t nowNs)
{
    for (auto it = m_collectives.begin(); it != m_collectives.end();)
    {
        if (it->second.finished && it->second.endNs + kForgetAfterNs < nowNs)
        {
            it = m_collectives.erase(it);
        }
        else
        {
            ++it;
        }
    }
}

} // namespace phantora
