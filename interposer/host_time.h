// The host time a rank's threads are charged between their GPU calls, from a table of
// recorded gaps (host_time/host_gap_table.h).
//
// Each program thread's calls are cut into gaps at *boundaries* (the calls that put work
// on the GPU, wait for it or order it: host_time/host_label.h).  When a gap starts,
// the thread looks up the recorded host time that followed its last boundaries on the
// real machine: that is the gap's *budget*, and the thread's own CPU time no longer moves
// its clock.  The budget is charged, whole, at the first moment anything outside the
// thread can see its clock: the next boundary, a clock read, or a hand-over to another
// thread (thread_handoff.cc).  So every instant the simulation or the program observes
// is a sum of recorded times and answers from the bridge: the same on a quiet or a busy
// machine, on any host.  Charging the budget early, at the first observation, rather than
// spreading it by this machine's progress through the gap, is what keeps it so; the cost
// is that an observation in the middle of a gap sees the gap's end.
//
// The table is the program's recording, or for a program the profile never recorded the
// host-time model of every program it did (host_time/host_time_model.h).  Where there is
// no table ([cpu] host_time = "measured", or nothing recorded to learn from) the thread's
// CPU time is measured as before and scaled to the recording host's speed (sim_clock.h).
// With a table, a thread's start-up before its first boundary is not charged (no recording
// holds it); past 10 s of CPU it is measured.  A gap that runs far past its budget (a
// thread that spins reading the clock until time passes) is measured too, so it cannot
// spin forever.  How much host time came from where is counted per source and reported.
#pragma once

#include "host_time/host_gap_table.h"
#include "host_time/readback_table.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace phantora::interposer
{

class HostTime
{
public:
    static HostTime& Get();

    /// The table from the Welcome (empty: measure everything), its recorded read-back
    /// values (host_time/readback_table.h; empty: none) and [cpu] time_scale.
    void Load(std::string_view tableBytes, std::string_view readbackBytes, double timeScale);
    bool Active() const { return !m_table.Empty(); }

    /// The calling thread used \p localNs of CPU (already scaled): how far its clock moves.
    int64_t OnLocalCpu(int64_t localNs);
    /// The calling thread's clock is about to be seen: what it owes of its budget.
    int64_t OnExpose();
    /// The calling thread makes boundary call \p what (host_label.h's "what"); what it
    /// owes.  Only the first of an intercepted call counts (one API call, one boundary).
    int64_t OnBoundary(std::string_view what);
    /// The host time the recording measured for the current boundary call itself (a
    /// launch's, a library call's, an NCCL call's own work), once: it stands for the
    /// scenario's call_overhead / query_overhead.  nullopt for calls that wait, or ones
    /// the recording has no cost for.
    std::optional<int64_t> TakeCallCost();
    /// The calling thread submits work in a call the recording does not cut gaps at (a
    /// driver-API launch: Triton's cuLaunchKernel is no boundary of the recorder), so the
    /// current gap's budget already holds its host time.  It moves the clock by
    /// \p launchCostNs (the launch's own cost) out of that budget, not on top of it, so the
    /// gap's work reaches the GPU launch by launch and the gap still costs its budget, or
    /// its launches' cost where that is more (a gap of the host-time model, learned from
    /// programs whose gaps held no such launches); nullopt where no budget stands for the
    /// gap (the caller charges the call as any other launch).
    std::optional<int64_t> OnInnerCall(int64_t launchCostNs);
    /// The outermost intercepted call returns: a boundary's next gap starts here.
    void OnCallEnd();
    /// The calling thread is the interposer's own (it runs host functions for the
    /// runtime): its calls are no boundaries, its time is always measured.
    void MeasureThisThread();
    /// Whether the calling thread's current intercepted call is charged its own host cost
    /// (query_overhead): not while a budget stands for the gap it sits in.
    bool ChargesCallCost() const;

    /// A device-to-host copy of \p n bytes into \p dst, made by the calling thread's
    /// current intercepted call \p what (host_label.h; its boundary is not counted yet), of
    /// which the value shadow knew no byte: writes the value the recording read there
    /// (host_time/readback_table.h) and returns true, or returns false and leaves \p dst
    /// alone (zeros).  Keyed like the gap that follows the copy: the thread's last
    /// boundaries, this copy last, and \p n.
    bool ServeRecordedRead(std::string_view what, void* dst, std::size_t n);

    /// Host time charged so far, per host_time::Source, and the number of gaps; small
    /// device-to-host reads served from the recording and read as zeros.
    struct Totals
    {
        std::array<int64_t, host_time::kSources> ns{};
        std::array<uint64_t, host_time::kSources> gaps{};
        uint64_t readbacksServed{0};
        uint64_t readbacksZeros{0};
    };
    Totals Charged() const;

private:
    /// Ends the calling thread's current gap at boundary \p label: counts it under its
    /// source (and logs it, PHANTORA_HOST_TIME_LOG).
    void CloseGap(const std::string& label);

    host_time::GapTable m_table;
    host_time::ReadbackTable m_readbacks;
    std::atomic<uint64_t> m_readbacksServed{0};
    std::atomic<uint64_t> m_readbacksZeros{0};
    double m_timeScale{1.0};
    std::array<std::atomic<int64_t>, host_time::kSources> m_ns{};
    std::array<std::atomic<uint64_t>, host_time::kSources> m_gaps{};
};

} // namespace phantora::interposer
