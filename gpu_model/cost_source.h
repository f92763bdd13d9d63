// Where an op's simulated duration came from: what KernelCostTable counts each op by and
// the report shows, in the order the table tries them (kernel_cost_table.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace phantora
{

enum class CostSource : uint8_t
{
    Table,       ///< [kernels.durations]
    Measured,    ///< the profile, this exact op
    ShapeScaled, ///< the profile, the same op at other shapes
    Bytes,       ///< the bytes the launch moves, at the bandwidth the profile measured for them
    Family,      ///< the profile, the same kernel template with other template arguments
    Roofline,    ///< the GPU's peak flops / bandwidth (copies: the scenario's link model)
    Default,     ///< [kernels] default
};
inline constexpr std::size_t kCostSources = 7;
const char* CostSourceName(CostSource s);

struct OpCost
{
    int64_t ns{0};
    CostSource source{CostSource::Default};
};

} // namespace phantora
