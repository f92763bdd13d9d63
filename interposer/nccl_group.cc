#include "nccl_group.h"

#include <utility>

namespace phantora::interposer
{

NcclGroup& NcclGroup::ThisThread()
{
    thread_local NcclGroup g;
    return g;
}

void NcclGroup::Add(uint64_t comm, uint64_t stream, const wire::P2POp& op)
{
    for (auto& b : m_batches)
    {
        if (b.comm == comm && b.stream == stream)
        {
            b.ops.push_back(op);
            return;
        }
    }
    m_batches.push_back(wire::NcclP2P{comm, stream, {op}});
}

std::optional<std::vector<wire::NcclP2P>> NcclGroup::End()
{
    if (m_depth == 0)
    {
        return std::nullopt;
    }
    if (--m_depth > 0)
    {
        return std::vector<wire::NcclP2P>{};
    }
    return std::exchange(m_batches, {});
}

} // namespace phantora::interposer
