#include "host_time.h"

#include "host_call_site.h"

#include <algorithm>
#include <cmath>

namespace phantora::interposer
{

namespace
{

using host_time::Source;

/// A gap that has used this much more CPU than its budget is measured instead: a thread
/// that waits for time to pass by reading the clock would otherwise never see it pass.
constexpr int64_t kEscapeFactor = 4;
constexpr int64_t kEscapeSlackNs = 2'000'000;

struct Gap
{
    bool budgeted{false}; ///< the table gave this gap a budget
    bool spent{false};    ///< the budget is on the clock already
    bool escaped{false};  ///< ran far past its budget: measured from then on
    bool boundaryInCall{false};
    bool started{false};
    bool measuredOnly{false}; ///< an interposer thread (MeasureThisThread) ///< past the thread's first boundary (what came before is start-up)
    int64_t budgetNs{0};
    int64_t localNs{0}; ///< this machine's CPU time in the gap (scaled)
    Source source{Source::Measured};
    host_time::Context context;
};

thread_local Gap t_gap;

} // namespace

HostTime& HostTime::Get()
{
    static auto* h = new HostTime; // never destroyed: threads charge time during exit
    return *h;
}

void HostTime::Load(std::string_view tableBytes, double timeScale)
{
    m_table = host_time::GapTable::Parse(tableBytes);
    m_timeScale = timeScale;
}

int64_t HostTime::OnLocalCpu(int64_t localNs)
{
    Gap& g = t_gap;
    g.localNs += localNs;
    if (!g.budgeted || g.escaped)
    {
        return localNs;
    }
    if (g.localNs > kEscapeFactor * g.budgetNs + kEscapeSlackNs)
    {
        g.escaped = true;
        const int64_t owed = g.spent ? g.localNs - g.budgetNs : g.localNs;
        g.spent = true;
        return std::max<int64_t>(owed, 0);
    }
    return 0;
}

int64_t HostTime::OnExpose()
{
    Gap& g = t_gap;
    if (g.budgeted && !g.spent)
    {
        g.spent = true;
        return g.budgetNs;
    }
    return 0;
}

void HostTime::CloseGap()
{
    const Gap& g = t_gap;
    if (!g.started)
    {
        return; // start-up (imports, building the model on the CPU): not a gap between calls
    }
    const bool fromTable = g.budgeted && !g.escaped;
    const auto s = static_cast<std::size_t>(fromTable ? g.source : Source::Measured);
    m_ns[s].fetch_add(fromTable ? g.budgetNs : g.localNs, std::memory_order_relaxed);
    m_gaps[s].fetch_add(1, std::memory_order_relaxed);
}

int64_t HostTime::OnBoundary(std::string_view what)
{
    Gap& g = t_gap;
    if (!Active() || g.boundaryInCall || g.measuredOnly)
    {
        return 0;
    }
    const int64_t owed = OnExpose();
    CloseGap();
    static const void* self = reinterpret_cast<const void*>(&HostTime::Get);
    g.context.Push(host_time::HostLabel::Make(what, host_time::CallSiteOutside(self)));
    g.boundaryInCall = true;
    return owed;
}

void HostTime::OnCallEnd()
{
    Gap& g = t_gap;
    if (!g.boundaryInCall)
    {
        return;
    }
    g.boundaryInCall = false;
    g.started = true;
    const auto hit = m_table.Lookup(g.context);
    g.budgeted = hit.has_value();
    g.budgetNs = hit ? std::llround(static_cast<double>(hit->ns) * m_timeScale) : 0;
    g.source = hit ? hit->source : Source::Measured;
    g.spent = false;
    g.escaped = false;
    g.localNs = 0;
}

void HostTime::MeasureThisThread()
{
    t_gap.measuredOnly = true;
}

bool HostTime::ChargesCallCost() const
{
    const Gap& g = t_gap;
    return !g.budgeted || g.escaped || g.boundaryInCall;
}

HostTime::Totals HostTime::Charged() const
{
    Totals t;
    for (std::size_t i = 0; i < t.ns.size(); ++i)
    {
        t.ns[i] = m_ns[i].load(std::memory_order_relaxed);
        t.gaps[i] = m_gaps[i].load(std::memory_order_relaxed);
    }
    return t;
}

} // namespace phantora::interposer
