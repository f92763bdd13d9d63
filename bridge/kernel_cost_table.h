// Kernel durations for the GPU timeline.  For now they come from the scenario's
// [kernels] table; the profile cache (gpu_profiler/) will sit behind the same
// interface.  A miss is never fatal: the default duration is used and counted,
// so the report can say how much of the GPU time was estimated.
#pragma once

#include "scenario.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace phantora
{

class KernelCostTable
{
public:
    explicit KernelCostTable(const KernelSpec& spec);

    /// Duration of one launch of \p kernelName, a demangled name with or without its
    /// argument list ("step(float*, int)" matches an entry "step").
    int64_t DurationNs(std::string_view kernelName);

    uint64_t Hits() const { return m_hits; }
    uint64_t Misses() const { return m_misses; }
    const std::map<std::string, uint64_t>& MissedKernels() const { return m_missed; }

private:
    const KernelSpec& m_spec;
    uint64_t m_hits{0};
    uint64_t m_misses{0};
    std::map<std::string, uint64_t> m_missed;
};

} // namespace phantora
