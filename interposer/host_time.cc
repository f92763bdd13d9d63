#include "host_time.h"

#include "host_time/host_boundary.h"
#include "host_time/host_call_site.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>
#include <utility>

namespace phantora::interposer
{

namespace
{

using host_time::Source;

/// A gap that has used this much more CPU than its budget is measured instead: a thread
/// that waits for time to pass by reading the clock would otherwise never see it pass, and
/// one-off work the recording's expected gap does not stand for (a first step's lazy set-up)
/// shows.  Far above what a garbage-collection pause or a busy host adds to a gap: those
/// must not decide between the budget and this machine's clock, run by run.
constexpr int64_t kEscapeFactor = 100;
constexpr int64_t kEscapeSlackNs = 50'000'000;
/// A thread's CPU time between its first intercepted call and its first boundary is
/// start-up (a model built on the CPU, a process group set up): no recording holds it (the
/// recorder's gaps start at a boundary) and no step pays it, so with a table it is not
/// charged, and a run's clocks are the same on a quiet or a loaded machine.  Past this much
/// of this machine's CPU it is measured again, so a thread that waits for time to pass by
/// reading the clock before it ever touches the GPU still sees it pass.
constexpr int64_t kStartUpEscapeNs = 10'000'000'000;

struct Gap
{
    bool budgeted{false}; ///< the table gave this gap a budget
    bool spent{false};    ///< the budget is on the clock already
    bool escaped{false};  ///< ran far past its budget: measured from then on
    bool boundaryInCall{false};
    bool started{false};      ///< past the thread's first boundary (what came before is start-up)
    bool measuredOnly{false}; ///< an interposer thread (MeasureThisThread)
    int64_t budgetNs{0};
    int64_t innerNs{0};   ///< of the budget, charged already by calls inside the gap
    int64_t startUpNs{0}; ///< this machine's CPU time before the first boundary (scaled)
    int64_t localNs{0}; ///< this machine's CPU time in the gap (scaled)
    std::optional<int64_t> callCostNs; ///< the current boundary call's recorded cost
    Source source{Source::Measured};
    host_time::Context context;
};

thread_local Gap t_gap;

/// PHANTORA_HOST_TIME_LOG=DIR: every gap, one line each, to DIR/host_time.<pid>.tsv
/// (thread, the boundary that ended it, its source, what was charged, this machine's CPU
/// time in it): how the simulated host time came about, call by call.
class GapLog
{
public:
    static GapLog& Get()
    {
        static auto* log = new GapLog; // never destroyed: threads end gaps during exit
        return *log;
    }
    bool On() const { return m_file != nullptr; }
    void Write(const std::string& label, Source source, int64_t chargedNs, int64_t localNs)
    {
        std::lock_guard lock(m_mutex);
        std::fprintf(m_file, "%ld\t%s\t%s\t%lld\t%lld\n", static_cast<long>(gettid()), label.c_str(),
                     host_time::SourceName(source), static_cast<long long>(chargedNs),
                     static_cast<long long>(localNs));
    }

private:
    GapLog()
    {
        if (const char* dir = std::getenv("PHANTORA_HOST_TIME_LOG"))
        {
            const std::string path =
                std::string(dir) + "/host_time." + std::to_string(getpid()) + ".tsv";
            m_file = std::fopen(path.c_str(), "w");
        }
    }
    std::mutex m_mutex;
    std::FILE* m_file{nullptr};
};

} // namespace

HostTime& HostTime::Get()
{
    static auto* h = new HostTime; // never destroyed: threads charge time during exit
    return *h;
}

void HostTime::Load(std::string_view tableBytes, std::string_view readbackBytes,
                    double timeScale)
{
    m_table = host_time::GapTable::Parse(tableBytes);
    m_readbacks = host_time::ReadbackTable::Parse(readbackBytes);
    m_timeScale = timeScale;
}

bool HostTime::ServeRecordedRead(std::string_view what, void* dst, std::size_t n)
{
    const Gap& g = t_gap;
    if (!Active() || g.boundaryInCall || g.measuredOnly || n == 0 ||
        n > host_time::kMaxReadbackBytes)
    {
        return false; // not a boundary of its own (a nested call), or no recording
    }
    const host_time::ReadbackTable::Entry* hit = nullptr;
    if (!m_readbacks.Empty())
    {
        // The same site OnBoundary will give this call: the first frame outside this library.
        static const void* self = reinterpret_cast<const void*>(&HostTime::Get);
        host_time::Context context = g.context;
        context.Push(host_time::HostLabel::Make(what, host_time::CallSiteOutside(self)));
        hit = m_readbacks.Lookup(context, n);
    }
    if (!hit || hit->bytes.size() != n)
    {
        m_readbacksZeros.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    std::memcpy(dst, hit->bytes.data(), n);
    m_readbacksServed.fetch_add(1, std::memory_order_relaxed);
    return true;
}

int64_t HostTime::OnLocalCpu(int64_t localNs)
{
    Gap& g = t_gap;
    g.localNs += localNs;
    if (!g.started && !g.measuredOnly && Active())
    {
        g.startUpNs += localNs;
        return g.startUpNs <= kStartUpEscapeNs ? 0
                                               : std::min(localNs, g.startUpNs - kStartUpEscapeNs);
    }
    if (!g.budgeted || g.escaped)
    {
        return localNs;
    }
    if (g.localNs > kEscapeFactor * g.budgetNs + kEscapeSlackNs)
    {
        g.escaped = true;
        const int64_t owed = g.localNs - (g.spent ? std::max(g.budgetNs, g.innerNs) : g.innerNs);
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
        return std::max<int64_t>(g.budgetNs - g.innerNs, 0);
    }
    return 0;
}

std::optional<int64_t> HostTime::OnInnerCall(int64_t launchCostNs)
{
    Gap& g = t_gap;
    if (!Active() || g.measuredOnly || !g.started || !g.budgeted || g.escaped)
    {
        return std::nullopt;
    }
    // Out of the budget while it lasts; past it, on top: a gap is at least its launches.
    // Once the budget is on the clock (the gap's end seen early), only what the launches
    // add beyond it moves the clock.
    const int64_t step = std::max<int64_t>(launchCostNs, 0);
    const int64_t before = g.spent ? std::max(g.budgetNs, g.innerNs) : g.innerNs;
    g.innerNs += step;
    return (g.spent ? std::max(g.budgetNs, g.innerNs) : g.innerNs) - before;
}

void HostTime::CloseGap(const std::string& label)
{
    const Gap& g = t_gap;
    if (!g.started)
    {
        return; // start-up (imports, building the model on the CPU): not a gap between calls
    }
    const bool fromTable = g.budgeted && !g.escaped;
    const Source source = fromTable ? g.source : Source::Measured;
    const int64_t charged = fromTable ? g.budgetNs : g.localNs;
    m_ns[static_cast<std::size_t>(source)].fetch_add(charged, std::memory_order_relaxed);
    m_gaps[static_cast<std::size_t>(source)].fetch_add(1, std::memory_order_relaxed);
    if (GapLog::Get().On())
    {
        GapLog::Get().Write(label, source, charged, g.localNs);
    }
}

int64_t HostTime::OnBoundary(std::string_view what)
{
    Gap& g = t_gap;
    if (!Active() || g.boundaryInCall || g.measuredOnly)
    {
        return 0;
    }
    const int64_t owed = OnExpose();
    static const void* self = reinterpret_cast<const void*>(&HostTime::Get);
    const auto label = host_time::HostLabel::Make(what, host_time::CallSiteOutside(self));
    CloseGap(label.text);
    g.context.Push(label);
    g.callCostNs.reset();
    if (!host_time::boundary::Waits(what))
    {
        if (auto cost = m_table.CallCost(label))
        {
            g.callCostNs = std::llround(static_cast<double>(cost->ns) * m_timeScale);
        }
    }
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
    g.innerNs = 0;
    g.localNs = 0;
}

std::optional<int64_t> HostTime::TakeCallCost()
{
    return std::exchange(t_gap.callCostNs, std::nullopt);
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
    t.readbacksServed = m_readbacksServed.load(std::memory_order_relaxed);
    t.readbacksZeros = m_readbacksZeros.load(std::memory_order_relaxed);
    return t;
}

} // namespace phantora::interposer
