#include "engine/collective_value_store.h"

#include "collective_values.h"

#include <algorithm>

namespace phantora
{

void CollectiveValueStore::Offer(uint64_t comm, uint64_t sequence, std::size_t commSize, int member,
                                 const wire::NcclCollective& m, bool reads)
{
    auto [it, fresh] = m_values.try_emplace({comm, sequence});
    ValueSlot& slot = it->second;
    if (fresh)
    {
        slot.op = m.op;
        slot.type = m.dataType;
        slot.redOp = m.redOp;
        slot.root = m.root;
        slot.inputs.resize(commSize);
    }
    if (slot.op == m.op && slot.type == m.dataType && slot.redOp == m.redOp &&
        slot.root == m.root && member >= 0 && static_cast<std::size_t>(member) < slot.inputs.size())
    {
        slot.inputs[static_cast<std::size_t>(member)] = m.values;
        slot.unfetched += reads ? 1 : 0;
    }
}

bool CollectiveValueStore::Holds(uint64_t comm, uint64_t sequence) const
{
    return m_values.contains({comm, sequence});
}

wire::CollectiveResult CollectiveValueStore::Take(uint64_t comm, uint64_t sequence, int member)
{
    wire::CollectiveResult result;
    auto it = m_values.find({comm, sequence});
    if (it == m_values.end())
    {
        return result;
    }
    ValueSlot& slot = it->second;
    if (!slot.computed)
    {
        slot.computed = true;
        slot.results.assign(slot.inputs.size(), std::nullopt);
        if (std::all_of(slot.inputs.begin(), slot.inputs.end(),
                        [](const auto& in) { return in.has_value(); }))
        {
            std::vector<std::string> inputs;
            for (auto& in : slot.inputs)
            {
                inputs.push_back(std::move(*in));
            }
            slot.results = CollectiveResults(slot.op, slot.type, slot.redOp, slot.root, inputs);
        }
        slot.inputs.clear();
    }
    if (member >= 0 && static_cast<std::size_t>(member) < slot.results.size())
    {
        auto& mine = slot.results[static_cast<std::size_t>(member)];
        if (mine && mine->size() <= wire::kMaxValueBytes)
        {
            result.known = true;
            result.values = std::move(*mine);
        }
        mine.reset();
    }
    if (--slot.unfetched <= 0)
    {
        m_values.erase(it);
    }
    return result;
}

} // namespace phantora
