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
    wire::NcclP2P* batch = nullptr;
    for (auto& b : m_batches)
    {
        if (b.comm == comm && b.stream == stream)
        {
            batch = &b;
            break;
        }
    }
    if (!batch)
    {
        batch = &m_batches.emplace_back(wire::NcclP2P{comm, stream, {}});
    }
    // A batch's sends carry at most kMaxP2PValueBytes of values together (the message's
    // bound); beyond it a send goes as its size alone, and its receiver reads zeros, as
    // for any send whose bytes the rank does not know.
    std::size_t carried = 0;
    for (const auto& o : batch->ops)
    {
        carried += o.values.size();
    }
    batch->ops.push_back(op);
    if (carried + op.values.size() > wire::kMaxP2PValueBytes)
    {
        batch->ops.back().hasValues = false;
        batch->ops.back().values.clear();
    }
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
