// The host-time profile: how long a thread of the recorded program spent on the host
// (thread CPU time on the recording machine) between one boundary call and the next,
// keyed by the calls that came before (host_label.h).  The simulation charges these
// recorded times instead of measuring its own CPU, so a simulated step no longer depends
// on how fast, or how loaded, the simulating machine is.
//
// A gap is keyed by the thread's last boundaries, most specific first:
//   the last 8..1 labels with their call sites             (Source::Context)
//   the same with each site reduced to its module          (Source::ModuleContext)
//   the same with no sites                                 (Source::BareContext)
//   the kind of the last call (launch, event, nccl, ...)   (Source::Kind)
//   every gap of the recording                             (Source::Global)
// and takes the median of the recorded gaps with that key, or with GapStatistic::Mean
// their expected value (ExpectedGap).  A program runs the same
// code whatever the number of ranks, so a one-GPU recording's contexts cover most of an
// N-rank run's; where N ranks add calls (collectives), the shorter keys still match.
// The key is what came *before* the gap, so a thread knows its whole budget when the
// gap starts (host_time.h in the interposer says why that matters).
#pragma once

#include "host_label.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace phantora::host_time
{

inline constexpr int kDepth = 8;

/// How far from the median (in sigmas, estimated as 1.4826 x the median absolute
/// deviation) a sample counts at its own value in ExpectedGap; one further counts as this.
inline constexpr double kWinsorSigmas = 3.0;

/// What a gap (or a call) of one key costs on average: the mean of \p samples, winsorised
/// at kWinsorSigmas around their median.  A simulated step is a sum of gaps, so this is
/// what a step's host time adds up to: host gaps are skewed to the right (allocator, GC,
/// interpreter work that comes now and then), and their medians summed fall short of a
/// recorded step by 8-9 % (Megatron, examples/megatron/README.md).  Plain means would take
/// in one-off work instead (a first step's lazy set-up: one sample many times the others),
/// which the clamp keeps to a few sigmas.  0 for no samples.
int64_t ExpectedGap(std::vector<int64_t> samples);

/// What a key's gaps are charged ([cpu] host_gap in a scenario).  Median is the default:
/// the one-GPU train_gpt table (bench/accuracy) is nearer its real runs with it, whose
/// host was faster than the recordings' (examples/megatron/README.md has the figures).
enum class GapStatistic : uint8_t
{
    Median,
    Mean, ///< ExpectedGap
};

enum class Source : uint8_t
{
    Context,
    ModuleContext,
    BareContext,
    Kind,
    Global,
    Measured, ///< not from the profile: this machine's CPU time, scaled (see host_time.h)
};
inline constexpr int kSources = 6;
const char* SourceName(Source s);

/// One recorded thread: its boundaries in order, the host time before each, and the
/// host time each call itself took.
struct Sequence
{
    std::vector<std::string> labels;
    std::vector<int64_t> gapBeforeNs; ///< [i]: between boundary i-1 and i ([0] unused)
    /// [i]: the thread CPU time of call i itself (the real runtime's or library's own work:
    /// a launch's few microseconds, an NCCL call's tens); -1 where unknown (a call that
    /// waits, whose CPU time is spinning, or a log recorded before this was kept).
    std::vector<int64_t> callNs;
    /// Position in labels -> the bytes a small device-to-host copy made by that call read
    /// on the real GPU (readback_table.h); empty in recordings made before they were kept.
    std::map<std::size_t, std::string> reads;
};

/// The first call of \p thread whose following gap belongs to its steady steps: its second
/// half.  The first holds the start-up and the first steps' one-off work (the caching
/// allocator's cudaMalloc growth, cuBLAS handles and workspaces, autotuning, torch.compile's
/// compilation and CUDA-graph capture: seconds of CPU inside gaps a step never repeats).
inline std::size_t SteadyFrom(const Sequence& thread)
{
    return (thread.labels.size() + 1) / 2;
}

/// The last kDepth boundaries of one thread.
class Context
{
public:
    void Push(const HostLabel& label);
    bool Empty() const { return m_count == 0; }
    /// The keys to look up, most specific first, with the source each stands for; contexts
    /// of at most \p maxDepth calls.
    template <class F> void ForEachKey(F&& f, int maxDepth = kDepth) const;

private:
    struct Entry
    {
        uint64_t full, module, bare, kind;
    };
    std::array<Entry, kDepth> m_ring{}; ///< m_ring[(m_next - 1) % kDepth] is the latest
    int m_next{0};
    int m_count{0};
};

class GapTable;

/// The recorded samples behind a GapTable, gathered thread by thread: every gap under each
/// key of the context before it (Context::ForEachKey), every call's own time under its
/// call keys.  GapTable::Build reduces them to one figure a key; the host-time model
/// (host_time_model.h) reduces each program's alone and then combines the programs.
class GapSamples
{
public:
    /// Which keys a gap is gathered under.
    enum class Keys : uint8_t
    {
        All,
        /// A gap after a call that waits (a synchronize, a blocking copy: host_boundary.h's
        /// Waits) only under its kind: what a program does once it has the GPU's result
        /// (reads a loss, logs, loads the next batch) is that program's own work, which
        /// the call sites before it do not tell (host_time_model.h).
        KindAfterWaits,
    };
    explicit GapSamples(Keys keys = Keys::All, int maxDepth = kDepth)
        : m_keys(keys), m_maxDepth(maxDepth)
    {
    }

    /// Adds \p thread's gaps and call times, each multiplied by \p scale (a recording
    /// host's speed relative to another's), from the gap after its call \p from on (the
    /// calls before it still make the contexts; SteadyFrom: a thread's steady steps);
    /// throws std::invalid_argument for a sequence whose labels and gaps differ in length.
    void Add(const Sequence& thread, double scale = 1.0, std::size_t from = 0);
    bool Empty() const { return m_all.empty(); }
    /// The table: each key's samples reduced to \p statistic.
    GapTable Reduce(GapStatistic statistic) const;
    /// The samples themselves, key -> gaps (or calls) in the order they were added: what
    /// the host-time model weighs programs by (host_time_model.h).
    const std::unordered_map<uint64_t, std::vector<int64_t>>& GapsByKey() const { return m_gaps; }
    const std::unordered_map<uint64_t, std::vector<int64_t>>& CallsByKey() const { return m_calls; }
    const std::vector<int64_t>& AllGaps() const { return m_all; }

private:
    const HostLabel& Label(const std::string& text);

    Keys m_keys;
    int m_maxDepth;
    std::unordered_map<uint64_t, std::vector<int64_t>> m_gaps;
    std::unordered_map<uint64_t, std::vector<int64_t>> m_calls;
    std::vector<int64_t> m_all;
    /// A recording names a few hundred calls a million times: hash each text once.
    std::unordered_map<std::string, HostLabel> m_labels;
};

/// \p samples reduced to \p statistic (the median, or ExpectedGap); 0 for none.
int64_t Reduce(std::vector<int64_t> samples, GapStatistic statistic);

class GapTable
{
public:
    struct Hit
    {
        int64_t ns;
        Source source;
    };

    static GapTable Build(const std::vector<Sequence>& threads,
                          GapStatistic statistic = GapStatistic::Median);
    /// A table of figures already reduced (host_time_model.h): key -> ns for gaps and for
    /// calls, and the figure of every gap (nullopt: an empty table).
    static GapTable FromFigures(std::unordered_map<uint64_t, int64_t> gaps,
                                std::unordered_map<uint64_t, int64_t> calls,
                                std::optional<int64_t> global);
    /// The figures, for combining tables (host_time_model.h).
    const std::unordered_map<uint64_t, int64_t>& GapFigures() const { return m_ns; }
    const std::unordered_map<uint64_t, int64_t>& CallFigures() const { return m_call; }
    std::optional<int64_t> GlobalFigure() const { return m_global; }

    /// The recorded host time that follows \p context; nullopt if the table is empty.
    std::optional<Hit> Lookup(const Context& context) const;
    /// The recorded host time of the call \p label itself (the statistic; by the call with its
    /// site, its module, no site, then its kind); nullopt if no such call was recorded.
    std::optional<Hit> CallCost(const HostLabel& label) const;
    bool Empty() const { return !m_global; }
    std::size_t Keys() const { return m_ns.size(); }

    /// A compact, deterministic encoding (sorted by key) for the wire.
    std::string Serialize() const;
    /// Throws std::invalid_argument on bytes Serialize did not write.
    static GapTable Parse(std::string_view bytes);

private:
    std::unordered_map<uint64_t, int64_t> m_ns;   ///< key -> ns (the statistic of its samples)
    std::unordered_map<uint64_t, int64_t> m_call; ///< call key -> ns of the call itself
    std::optional<int64_t> m_global;
};

template <class F> void Context::ForEachKey(F&& f, int maxDepth) const
{
    static constexpr Source kLevels[] = {Source::Context, Source::ModuleContext,
                                         Source::BareContext};
    for (int level = 0; level < 3; ++level)
    {
        for (int depth = std::min({m_count, kDepth, maxDepth}); depth >= 1; --depth)
        {
            uint64_t key = Combine(0x51ed270b27f6fa5bull + static_cast<uint64_t>(level),
                                   static_cast<uint64_t>(depth));
            for (int back = 1; back <= depth; ++back)
            {
                const Entry& e =
                    m_ring[static_cast<std::size_t>((m_next - back + kDepth) % kDepth)];
                key = Combine(key, level == 0 ? e.full : level == 1 ? e.module : e.bare);
            }
            f(key, kLevels[level]);
        }
    }
    if (m_count > 0)
    {
        const Entry& last = m_ring[static_cast<std::size_t>((m_next - 1 + kDepth) % kDepth)];
        f(Combine(0x2545f4914f6cdd1dull, last.kind), Source::Kind);
    }
}

} // namespace phantora::host_time
