#include "engine/p2p_value_store.h"

#include <utility>

namespace phantora
{

void P2PValueStore::Offer(uint64_t comm, int from, int to, uint64_t sequence, std::string values)
{
    m_values[{comm, from, to, sequence}] = std::move(values);
}

wire::CollectiveResult P2PValueStore::Take(uint64_t comm, int from, int to, uint64_t sequence)
{
    wire::CollectiveResult result;
    auto it = m_values.find({comm, from, to, sequence});
    if (it == m_values.end())
    {
        return result;
    }
    result.known = it->second.size() <= wire::kMaxValueBytes;
    if (result.known)
    {
        result.values = std::move(it->second);
    }
    m_values.erase(it);
    return result;
}

} // namespace phantora
