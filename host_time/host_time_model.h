// Host time for a program the profile holds no recording of: a model learned from every
// program the profile did record.
//
// Between two CUDA calls a training program's host runs the framework's own code (the
// dispatcher, autograd, the caching allocator, a launch's argument packing) far more than
// the user's: the same library call sites follow one another with much the same host time
// in every PyTorch program.  So the model keeps GapTable's keys (the calls before a gap,
// with their sites, their modules, bare, then the last call's kind): a context that one
// recorded program ran stands for that program's time there, and a context many ran for
// the median of their times.  Gaps are first scaled to one reference host (each run's
// measured host speed against the median of all runs', host_speed.h): a recording made on
// a slower CPU would otherwise count its slowness as the program's.
//
// How programs are combined at a key (README.md has the figures that chose each rule):
// - each program's own figure first (its statistic over all its runs), then the weighted
//   median over programs, each weighted by how often one run of it went through the key
//   (its gaps there / its runs): a program recorded 30 times must not outvote one recorded
//   once, but a program whose inner loop passes a context hundreds of times a step says
//   more about that context than one passing it once, at its step's end, with its own
//   Python in the gap (equal hits: the plain median);
// - a key seen fewer than kMinSamples times over all programs is left out, so the shorter
//   contexts answer: one gap is one moment (a garbage collection, a lazy initialisation, a
//   CUDA-graph replay that hides a whole step), not what the calls before it cost.
#pragma once

#include "host_gap_table.h"

#include <cstddef>
#include <string>
#include <vector>

namespace phantora::host_time
{

/// The fewest gaps, over all programs, a key of the model needs.
inline constexpr std::size_t kMinSamples = 3;

class HostTimeModel
{
public:
    struct Options
    {
        GapStatistic statistic{GapStatistic::Median};
        /// Weigh each program by its hits per run at a key (false: each program once).
        bool weightByHits{true};
        std::size_t minSamples{kMinSamples};
        /// The fewest programs that must have run a key for it to enter the model.
        std::size_t minPrograms{1};
    };

    HostTimeModel() = default;
    explicit HostTimeModel(Options options) : m_options(options) {}
    explicit HostTimeModel(GapStatistic statistic) { m_options.statistic = statistic; }

    /// One recorded program's samples (all its \p runs, already scaled to the reference
    /// host).  Reduced at once: the model keeps figures, not samples.
    void AddProgram(const GapSamples& samples, std::size_t runs = 1);
    std::size_t Programs() const { return m_programs; }

    /// The model as a table the interposer charges like a recording (host_time.h); empty
    /// if no program was added.
    GapTable Build() const;

    /// One program's figure at a key.
    struct Figure
    {
        int64_t ns;
        double weight;       ///< its gaps at the key per run
        std::size_t samples; ///< its gaps at the key
    };

private:
    Options m_options;
    std::size_t m_programs{0};
    /// key -> each program's figure, in the order the programs were added.
    std::unordered_map<uint64_t, std::vector<Figure>> m_gaps;
    std::unordered_map<uint64_t, std::vector<Figure>> m_calls;
    std::vector<Figure> m_global;
};

/// The weighted median of \p figures: the figure at which half of the weight lies on each
/// side (the mean of the two figures where the weight splits exactly in half, as a plain
/// median of an even count).  0 for none.
int64_t WeightedMedian(std::vector<HostTimeModel::Figure> figures);

} // namespace phantora::host_time
