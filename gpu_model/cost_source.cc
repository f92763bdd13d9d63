#include "cost_source.h"

#include <iterator>

namespace phantora
{

const char* CostSourceName(CostSource s)
{
    static constexpr const char* kNames[] = {"table",  "measured", "shape_scaled", "bytes",
                                             "family", "roofline", "default"};
    static_assert(std::size(kNames) == kCostSources);
    return kNames[static_cast<int>(s)];
}

} // namespace phantora
