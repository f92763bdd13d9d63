#include "engine/collective_matcher.h"

#include "engine/collective_error.h"
#include "nccl/collective_kind.h"

#include <algorithm>
#include <fmt/format.h>

namespace phantora
{

CollectiveMatcher::CollectiveMatcher(StartFn start) : m_start(std::move(start)) {}

void CollectiveMatcher::Ready(const Communicator& comm, uint64_t sequence, int memberIndex,
                              wire::CollectiveOp op, uint64_t bytes, uint64_t ticket,
                              int64_t readyNs, int root)
{
    const auto key = std::make_pair(comm.handle, sequence);
    auto [it, fresh] = m_open.try_emplace(key);
    Instance& inst = it->second;
    const auto n = comm.ranks.size();
    if (fresh)
    {
        inst.c.comm = &comm;
        inst.c.sequence = sequence;
        inst.c.op = op;
        inst.c.bytes = bytes;
        inst.c.root = root;
        inst.c.startNs = readyNs;
        inst.c.memberTickets.assign(n, 0);
        inst.arrived.assign(n, false);
    }
    else if (inst.c.op != op || inst.c.bytes != bytes || inst.c.root != root)
    {
        throw CollectiveError(fmt::format(
            "collective #{} on communicator {}: rank {} called {} of {} bytes (root {}), but "
            "another "
            "member called {} of {} bytes (root {}) (NCCL would hang or corrupt data)",
            sequence, comm.handle, comm.ranks[static_cast<std::size_t>(memberIndex)],
            CollectiveName(op), bytes, root, CollectiveName(inst.c.op), inst.c.bytes, inst.c.root));
    }
    inst.arrived[static_cast<std::size_t>(memberIndex)] = true;
    inst.c.memberTickets[static_cast<std::size_t>(memberIndex)] = ticket;
    inst.c.startNs = std::max(inst.c.startNs, readyNs);
    if (++inst.count == static_cast<int>(n))
    {
        MatchedCollective done = std::move(inst.c);
        m_open.erase(it);
        m_start(done);
    }
}

std::vector<std::string> CollectiveMatcher::Incomplete() const
{
    std::vector<std::string> out;
    for (const auto& [key, inst] : m_open)
    {
        std::string missing;
        for (std::size_t i = 0; i < inst.arrived.size(); ++i)
        {
            if (!inst.arrived[i])
            {
                missing +=
                    fmt::format("{}rank {}", missing.empty() ? "" : ", ", inst.c.comm->ranks[i]);
            }
        }
        out.push_back(fmt::format("{} #{} on communicator {} ({} bytes): not yet called by {}",
                                  CollectiveName(inst.c.op), inst.c.sequence, key.first,
                                  inst.c.bytes, missing));
    }
    return out;
}

} // namespace phantora
