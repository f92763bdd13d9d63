// How the run's GPU op durations were obtained (coverage of the profile), for the
// run summary and the --report JSON.
#pragma once

#include "console_lines.h"
#include "gpu_model/kernel_cost_table.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace phantora
{

/// {"from_table", "defaulted", "missing"} as before the profile cache, plus
/// "measured", "coverage" (per source: ops and GPU seconds; measured_share) and
/// "top_misses" (the \p top estimated ops with the most GPU time).
nlohmann::json KernelCostJson(const KernelCostTable& k, std::size_t top = 20);

/// The widest line the run summary prints (kernel names shortened, signatures cut).
inline constexpr std::size_t kSummaryWidth = kConsoleWidth;

/// A few lines for the run summary, each at most kSummaryWidth characters.
void PrintKernelCosts(std::FILE* out, const KernelCostTable& k, std::size_t top = 10);

} // namespace phantora
