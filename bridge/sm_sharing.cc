#include "sm_sharing.h"

#include <algorithm>
#include <cmath>

namespace phantora
{

namespace
{
/// Placed kernels remembered per stream: a collective is delayed only by what runs at
/// its launch, which is among a stream's last few kernels.
constexpr std::size_t kKernelsPerStream = 8;
/// Finished collectives older than this (simulated) before the latest kernel start are
/// dropped; a kernel starting that far back is not slowed by them.
constexpr int64_t kForgetAfterNs = 50'000'000;
} // namespace

SmSharing::SmSharing(int32_t smCount) : m_sms(smCount > 0 ? static_cast<uint32_t>(smCount) : 0U) {}

void SmSharing::AddCollective(uint64_t ticket, int64_t startNs, int64_t expectedEndNs,
                              uint32_t channels)
{
    if (!Enabled())
    {
        return;
    }
    m_collectives[ticket] = {startNs, std::max(startNs, expectedEndNs), channels, false};
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
    // The kernel's work in ns at full speed, done at rate (free SMs / SMs it needs) while
    // collectives hold SMs.  At least one SM stays its own: NCCL never takes them all.
    const double needs =
        static_cast<double>(std::min<uint64_t>(std::max<uint64_t>(ctas, 1), m_sms));
    double remaining = static_cast<double>(durationNs);
    double t = static_cast<double>(startNs);
    while (true)
    {
        const auto [held, next] = HeldAt(static_cast<int64_t>(std::floor(t)));
        const double free = static_cast<double>(m_sms - std::min(held, m_sms - 1));
        const double rate = std::min(1.0, free / needs);
        if (next == std::numeric_limits<int64_t>::max() ||
            t + remaining / rate <= static_cast<double>(next))
        {
            return static_cast<int64_t>(std::llround(t + remaining / rate));
        }
        remaining -= (static_cast<double>(next) - t) * rate;
        t = static_cast<double>(next);
    }
}

void SmSharing::AddKernel(uint64_t stream, int64_t startNs, int64_t endNs, uint64_t ctas)
{
    if (!Enabled())
    {
        return;
    }
    auto& recent = m_kernels[stream];
    recent.push_back({startNs, endNs, ctas});
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
    // SMs the collective does not need.
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
                if (k.startNs <= t && t < k.endNs && k.ctas > room)
                {
                    t = k.endNs;
                    moved = true;
                }
            }
        }
    }
    return t;
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
