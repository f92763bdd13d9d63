// The color torch gives a process group it splits from another (ncclCommSplit's color):
// torch.distributed's _process_group_color, abs(hash(tuple(ranks))) % 2**31, with
// CPython's tuple hash (xxHash-style, 3.8 and later) of the group's global ranks.  Folded,
// the bridge tells a group of the live ranks alone from one that spans their absent
// replicas by which of the two rank lists the color a live member passed belongs to.
#pragma once

#include <cstdint>
#include <vector>

namespace phantora
{

/// The split color torch passes for a group of \p ranks (global ranks, in the group's order).
int32_t TorchGroupColor(const std::vector<int>& ranks);

} // namespace phantora
