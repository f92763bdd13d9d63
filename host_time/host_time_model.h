// Host time for a program the profile holds no recording of: a model learned from every
// program the profile did record.
//
// Between two CUDA calls a training program's host runs the framework's own code (the
// dispatcher, autograd, the caching allocator, a launch's argument packing) far more than
// the user's: the same library call sites follow one another with much the same host time
// in every PyTorch program.  So the model keeps GapTable's keys (the calls before a gap,
// with their sites, their modules, bare, then the last call's kind): a context that one
// recorded program ran stands for that program's time there, and a context many ran for
// the median of their times.  Each program counts once, whatever the number of its
// recordings and of its gaps: its own figure per key first (the recording's statistic),
// then the median over the programs that have the key; a program recorded 30 times must
// not outvote one recorded once.  Gaps are first scaled to one reference host (each run's
// measured host speed against the median of all runs', host_speed.h): a recording made on
// a slower CPU would otherwise count its slowness as the program's.
#pragma once

#include "host_gap_table.h"

#include <cstddef>
#include <string>
#include <vector>

namespace phantora::host_time
{

class HostTimeModel
{
public:
    explicit HostTimeModel(GapStatistic statistic = GapStatistic::Median) : m_statistic(statistic)
    {
    }

    /// One recorded program's samples (all its runs, already scaled to the reference
    /// host).  Reduced at once: the model keeps figures, not samples.
    void AddProgram(const GapSamples& samples);
    std::size_t Programs() const { return m_programs; }

    /// The model as a table the interposer charges like a recording (host_time.h); empty
    /// if no program was added.
    GapTable Build() const;

private:
    GapStatistic m_statistic;
    std::size_t m_programs{0};
    /// key -> each program's figure, in the order the programs were added.
    std::unordered_map<uint64_t, std::vector<int64_t>> m_gaps;
    std::unordered_map<uint64_t, std::vector<int64_t>> m_calls;
    std::vector<int64_t> m_global;
};

} // namespace phantora::host_time
