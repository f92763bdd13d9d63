#include "engine/host_function_holds.h"

#include "engine/simulation_error.h"

#include <algorithm>
#include <fmt/format.h>

namespace phantora
{

HostFunctionHolds::HostFunctionHolds(EndFn end) : m_end(std::move(end)) {}

void HostFunctionHolds::Hold(int rank, uint64_t id, uint64_t ticket)
{
    m_holds[{rank, id}].ticket = ticket;
}

void HostFunctionHolds::Ready(int rank, uint64_t id, int64_t readyNs)
{
    m_holds[{rank, id}].readyNs = readyNs;
    MaybeEnd({rank, id});
}

void HostFunctionHolds::Done(int rank, uint64_t id, int64_t doneNs)
{
    auto it = m_holds.find({rank, id});
    if (it == m_holds.end() || it->second.doneNs)
    {
        throw SimulationError(
            fmt::format("rank {} ended host function {} it never launched", rank, id));
    }
    it->second.doneNs = doneNs;
    MaybeEnd({rank, id});
}

void HostFunctionHolds::MaybeEnd(Key key)
{
    auto it = m_holds.find(key);
    if (it == m_holds.end() || !it->second.readyNs || !it->second.doneNs)
    {
        return;
    }
    const HeldFunction h = it->second;
    m_holds.erase(it);
    m_end(key.first, h.ticket, std::max(*h.readyNs, *h.doneNs));
}

} // namespace phantora
