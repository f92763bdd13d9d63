#include "engine/communicator_registry.h"

#include "engine/collective_error.h"
#include "engine/torch_group_color.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace phantora
{

CommunicatorRegistry::CommunicatorRegistry(const FoldLayout& fold) : m_fold(fold) {}

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
    p.live.push_back(globalRank);
    if (++p.joined == nranks)
    {
        return Complete(id, std::move(p.members));
    }
    if (!m_fold.Folds())
    {
        return std::nullopt;
    }
    auto spanned = SpannedMembers(p, globalRank);
    if (spanned && nranks > m_fold.LiveCount())
    {
        // No set of live processes is that large: the absent replicas are the rest.
        return Complete(id, std::move(*spanned));
    }
    return std::nullopt;
}

CommunicatorRegistry::Joined CommunicatorRegistry::Complete(const wire::NcclId& id,
                                                            std::vector<int> ranks)
{
    std::vector<int> live = std::move(m_pending.at(id).live);
    std::sort(live.begin(), live.end());
    m_pending.erase(id);
    const Communicator& stored = Add(std::move(ranks));
    return Joined{&stored, std::move(live)};
}

std::optional<std::vector<int>> CommunicatorRegistry::SpannedMembers(const PendingInit& p,
                                                                     int globalRank) const
{
    const int replicas = m_fold.Replicas();
    const bool mustSpan = p.nranks > m_fold.LiveCount();
    auto refuse = [&](const std::string& why) -> std::optional<std::vector<int>>
    {
        if (!mustSpan)
        {
            return std::nullopt; // it may still be a group of live ranks only
        }
        throw CollectiveError(fmt::format(
            "cannot fold: rank {} joined a communicator of {} ranks, more than the {} live "
            "processes, but {} ({})",
            globalRank, p.nranks, m_fold.LiveCount(), why, m_fold.Describe()));
    };
    if (p.nranks % replicas != 0)
    {
        return refuse(fmt::format("{} is not a multiple of the {} replicas", p.nranks, replicas));
    }
    const auto needed = static_cast<std::size_t>(p.nranks / replicas);
    if (p.live.size() < needed)
    {
        return std::nullopt; // more live members to come
    }
    if (p.live.size() > needed)
    {
        return refuse(fmt::format("{} live ranks joined where {} would span the replicas",
                                  p.live.size(), needed));
    }
    std::vector<int> ranks;
    ranks.reserve(static_cast<std::size_t>(p.nranks));
    for (int live : p.live)
    {
        for (int r = 0; r < replicas; ++r)
        {
            ranks.push_back(m_fold.InReplica(live, r));
        }
    }
    std::sort(ranks.begin(), ranks.end());
    for (std::size_t i = 0; i < ranks.size(); ++i)
    {
        const int member = p.members[i];
        if (member >= 0 && member != ranks[i])
        {
            return refuse(fmt::format("its communicator rank {} is rank {}, where the live "
                                      "members' replicas in ascending order put rank {}",
                                      i, member, ranks[i]));
        }
    }
    return ranks;
}

std::vector<CommunicatorRegistry::Joined> CommunicatorRegistry::ResolveFolded()
{
    std::vector<Joined> done;
    if (!m_fold.Folds())
    {
        return done;
    }
    std::vector<std::pair<wire::NcclId, std::vector<int>>> ready;
    for (const auto& [id, p] : m_pending)
    {
        if (auto ranks = SpannedMembers(p, p.live.front()))
        {
            ready.emplace_back(id, std::move(*ranks));
        }
    }
    for (auto& [id, ranks] : ready)
    {
        done.push_back(Complete(id, std::move(ranks)));
    }
    return done;
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
    std::size_t live = 0;
    for (int r : parent.ranks)
    {
        live += m_fold.IsLive(r) ? 1 : 0;
    }
    if (p.calls.size() < live)
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
    if (live < parent.ranks.size())
    {
        AddAbsentMembers(parent, globalRank, groups);
    }
    SplitResult result;
    std::map<int, const Communicator*> commOf; // parent member index -> new comm
    for (auto& [c, entries] : groups)
    {
        std::sort(entries.begin(), entries.end());
        std::vector<int> ranks;
        for (const auto& [k, index] : entries)
        {
            ranks.push_back(parent.ranks[static_cast<std::size_t>(index)]);
        }
        const Communicator& made = Add(std::move(ranks));
        for (const auto& [k, index] : entries)
        {
            commOf[index] = &made;
        }
    }
    for (std::size_t i = 0; i < parent.ranks.size(); ++i)
    {
        if (!m_fold.IsLive(parent.ranks[i]))
        {
            continue; // nobody to answer
        }
        auto it = commOf.find(static_cast<int>(i));
        result.members.emplace_back(parent.ranks[i], it == commOf.end() ? nullptr : it->second);
    }
    m_splits.erase({parent.handle, number});
    return result;
}

void CommunicatorRegistry::AddAbsentMembers(
    const Communicator& parent, int globalRank,
    std::map<int, std::vector<std::pair<int, int>>>& groups) const
{
    // The color torch passes is a hash of the group's global ranks: a group that spans
    // the live members' replicas has the color of that longer list.  An absent member in
    // no such group is in its own replica's copy of a live group, which has no live member
    // to create it: it takes no part here.
    std::map<int, int> indexOf; // global rank -> parent member index
    for (std::size_t i = 0; i < parent.ranks.size(); ++i)
    {
        indexOf[parent.ranks[i]] = static_cast<int>(i);
    }
    for (auto& [color, entries] : groups)
    {
        std::vector<int> liveRanks;
        for (const auto& [k, index] : entries)
        {
            liveRanks.push_back(parent.ranks[static_cast<std::size_t>(index)]);
        }
        std::sort(liveRanks.begin(), liveRanks.end());
        std::vector<int> spanned;
        for (int r : liveRanks)
        {
            for (int d = 0; d < m_fold.Replicas(); ++d)
            {
                spanned.push_back(m_fold.InReplica(r, d));
            }
        }
        std::sort(spanned.begin(), spanned.end());
        if (TorchGroupColor(spanned) == color)
        {
            entries.clear();
            for (std::size_t k = 0; k < spanned.size(); ++k)
            {
                auto it = indexOf.find(spanned[k]);
                if (it == indexOf.end())
                {
                    throw CollectiveError(fmt::format(
                        "cannot fold: a group split from communicator {} spans rank {}, "
                        "which is not in that communicator ({})",
                        parent.handle, spanned[k], m_fold.Describe()));
                }
                entries.emplace_back(static_cast<int>(k), it->second);
            }
        }
        else if (TorchGroupColor(liveRanks) != color)
        {
            throw CollectiveError(fmt::format(
                "cannot fold: rank {} split communicator {} (which has absent members) with "
                "color {}, which is torch's color neither of its live members {} nor of them "
                "with their replicas; folding follows groups torch splits by their ranks ({})",
                globalRank, parent.handle, color, fmt::join(liveRanks, ","), m_fold.Describe()));
        }
    }
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
