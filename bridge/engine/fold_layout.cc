#include "engine/fold_layout.h"

#include <fmt/format.h>
#include <stdexcept>

namespace phantora
{

FoldLayout::FoldLayout(int worldSize) : m_worldSize(worldSize) {}

FoldLayout::FoldLayout(int worldSize, int replicas, int stride)
    : m_worldSize(worldSize), m_replicas(replicas), m_stride(stride)
{
    if (worldSize <= 0 || replicas <= 0 || stride <= 0)
    {
        throw std::invalid_argument(fmt::format(
            "folding needs a positive world size, replica count and stride (got {}, {}, {})",
            worldSize, replicas, stride));
    }
    if (worldSize % (replicas * stride) != 0)
    {
        throw std::invalid_argument(
            fmt::format("cannot fold {} ranks into {} replicas {} ranks apart: the world size is "
                        "not a multiple of replicas x stride ({})",
                        worldSize, replicas, stride, replicas * stride));
    }
}

const FoldLayout& FoldLayout::None()
{
    static const FoldLayout none(1);
    return none;
}

std::vector<int> FoldLayout::LiveRanks() const
{
    std::vector<int> live;
    live.reserve(static_cast<std::size_t>(LiveCount()));
    for (int rank = 0; rank < m_worldSize; ++rank)
    {
        if (IsLive(rank))
        {
            live.push_back(rank);
        }
    }
    return live;
}

std::string FoldLayout::Describe() const
{
    return fmt::format("{} ranks as {} live x {} replicas (stride {})", m_worldSize, LiveCount(),
                       m_replicas, m_stride);
}

} // namespace phantora
