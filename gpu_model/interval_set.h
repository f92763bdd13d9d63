// A union of time intervals, for time shares: how long a GPU computed, communicated,
// both, or neither.  Intervals arrive in any order; they are merged lazily so memory
// stays proportional to the distinct busy periods, not to the ops.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace phantora
{

class IntervalSet
{
public:
    /// Adds [startNs, endNs); empty intervals are ignored.
    void Add(int64_t startNs, int64_t endNs);
    /// Total length of the union.
    int64_t TotalNs() const;
    /// Length of the part of the union that \p other also covers.
    int64_t OverlapNs(const IntervalSet& other) const;
    /// The union as sorted, disjoint intervals.
    const std::vector<std::pair<int64_t, int64_t>>& Merged() const;

private:
    void Merge() const;

    mutable std::vector<std::pair<int64_t, int64_t>> m_spans;
    mutable std::size_t m_mergedPrefix{0}; ///< m_spans[0, m_mergedPrefix) is sorted and disjoint
    std::size_t m_nextMerge{1024};
};

} // namespace phantora
