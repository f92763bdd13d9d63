#include "communicator_registry.h"

#include <algorithm>
#include <fmt/format.h>

namespace phantora
{

std::optional<CommunicatorRegistry::Joined>
CommunicatorRegistry::Join(const wire::NcclId& id, int nranks, int commRank, int globalRank)
{
    if (nranks <= 0 || commRank < 0 || commRank >= nranks)
    {
        throw CollectiveError(fmt::format("rank {}: ncclCommInitRank with rank {} of {} ranks",
                                          globalRank, commRank, nranks));
    }
    PendingInit& p = m_pending[id];
    if (p.nranks == 0)
    {
        p.nranks = nranks;
        p.members.assign(static_cast<std::size_t>(nranks), -1);
    }
    if (p.nranks != nranks)
    {
        throw CollectiveError(fmt::format(
            "rank {}: ncclCommInitRank with {} ranks, but other members of this id said {}",
            globalRank, nranks, p.nranks));
    }
    if (p.members[static_cast<std::size_t>(commRank)] != -1)
    {
        throw CollectiveError(fmt::format(
            "rank {}: ncclCommInitRank as communicator rank {}, already taken by rank {}",
            globalRank, commRank, p.members[static_cast<std::size_t>(commRank)]));
    }
    p.members[static_cast<std::size_t>(commRank)] = globalRank;
    if (++p.joined < nranks)
    {
        return std::nullopt;
    }
    std::vector<int> ranks = std::move(p.members);
    m_pending.erase(id);
    const Communicator& stored = Add(std::move(ranks));
    return Joined{&stored, stored.ranks};
}

const Communicator& CommunicatorRegistry::Add(std::vector<int> ranks)
{
    Communicator c;
    c.handle = m_nextHandle++;
    c.ranks = std::move(ranks);
    return m_comms.emplace(c.handle, std::move(c)).first->second;
}

std::optional<CommunicatorRegistry::SplitResult>
CommunicatorRegistry::Split(const Communicator& parent, int globalRank, int color, int key)
{
    const int member = MemberIndex(parent, globalRank);
    const uint64_t number = m_splitCount[{parent.handle, globalRank}]++;
    PendingSplit& p = m_splits[{parent.handle, number}];
    p.calls[member] = {color, key};
    if (p.calls.size() < parent.ranks.size())
    {
        return std::nullopt;
    }
    // color -> (key, parent member index): NCCL orders a new communicator by key, ties by
    // the old rank
    std::map<int, std::vector<std::pair<int, int>>> groups;
    for (const auto& [index, ck] : p.calls)
    {
        if (ck.first >= 0)
        {
            groups[ck.first].emplace_back(ck.second, index);
        }
    }
    SplitResult result;
    std::map<int, const Communicator*> commOf; // parent member index -> new comm
    for (auto& [color, entries] : groups)
    {
        std::sort(entries.begin(), entries.end());
        std::vector<int> ranks;
        for (const auto& [k, index] : entries)
        {
            ranks.push_back(parent.ranks[static_cast<std::size_t>(index)]);
        }
        const Communicator& c = Add(std::move(ranks));
        for (const auto& [k, index] : entries)
        {
            commOf[index] = &c;
        }
    }
    for (std::size_t i = 0; i < parent.ranks.size(); ++i)
    {
        auto it = commOf.find(static_cast<int>(i));
        result.members.emplace_back(parent.ranks[i], it == commOf.end() ? nullptr : it->second);
    }
    m_splits.erase({parent.handle, number});
    return result;
}

const Communicator& CommunicatorRegistry::Get(uint64_t handle) const
{
    auto it = m_comms.find(handle);
    if (it == m_comms.end())
    {
        throw CollectiveError(fmt::format("unknown NCCL communicator handle {}", handle));
    }
    return it->second;
}

int CommunicatorRegistry::MemberIndex(const Communicator& comm, int globalRank) const
{
    auto it = std::find(comm.ranks.begin(), comm.ranks.end(), globalRank);
    if (it == comm.ranks.end())
    {
        throw CollectiveError(fmt::format("rank {} used communicator {} it is not a member of",
                                          globalRank, comm.handle));
    }
    return static_cast<int>(it - comm.ranks.begin());
}

std::vector<std::string> CommunicatorRegistry::PendingInits() const
{
    std::vector<std::string> out;
    for (const auto& [id, p] : m_pending)
    {
        std::string who;
        for (std::size_t i = 0; i < p.members.size(); ++i)
        {
            if (p.members[i] >= 0)
            {
                who += fmt::format("{}rank {}", who.empty() ? "" : ", ", p.members[i]);
            }
        }
        out.push_back(fmt::format("ncclCommInitRank of {} ranks: only {} joined ({})", p.nranks,
                                  p.joined, who));
    }
    return out;
}

} // namespace phantora
