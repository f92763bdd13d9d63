#include "communicators.h"

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

P2PMatcher::P2PMatcher(StartFn start, DoneFn done)
    : m_start(std::move(start)), m_done(std::move(done))
{
}

P2PMatcher::Op P2PMatcher::Number(const Communicator& comm, int member, const wire::P2POp& op)
{
    const auto n = static_cast<int>(comm.ranks.size());
    if (op.peer < 0 || op.peer >= n)
    {
        throw CollectiveError(
            fmt::format("rank {}: nccl{} with peer {} on communicator {} of {} ranks",
                        comm.ranks[static_cast<std::size_t>(member)], op.send ? "Send" : "Recv",
                        op.peer, comm.handle, n));
    }
    const int from = op.send ? member : op.peer;
    const int to = op.send ? op.peer : member;
    return Op{op.peer, op.bytes, op.send, m_counts[{comm.handle, from, to, op.send}]++};
}

void P2PMatcher::Ready(const Communicator& comm, int member, uint64_t ticket,
                       const std::vector<Op>& ops, int64_t readyNs)
{
    const int rank = comm.ranks[static_cast<std::size_t>(member)];
    m_batches[ticket] = Batch{rank, ops.size(), readyNs};
    std::vector<Transfer> ready;
    std::vector<std::pair<uint64_t, uint64_t>> tickets; // per ready transfer: send, recv
    uint64_t sent = 0;
    for (const Op& op : ops)
    {
        sent += op.send ? op.bytes : 0;
    }
    const auto count = static_cast<uint32_t>(ops.size());
    for (const Op& op : ops)
    {
        const int from = op.send ? member : op.peer;
        const int to = op.send ? op.peer : member;
        const Key key{comm.handle, from, to, op.sequence};
        Pair& p = m_open[key];
        p.comm = &comm;
        (op.send ? p.send : p.recv) = Side{ticket, op.bytes, readyNs, count, sent};
        if (!p.send || !p.recv)
        {
            continue;
        }
        if (p.send->bytes != p.recv->bytes)
        {
            throw CollectiveError(fmt::format(
                "send/recv #{} from rank {} to rank {} on communicator {}: rank {} sends {} bytes "
                "but rank {} receives {} bytes (NCCL would fail or corrupt data)",
                op.sequence, comm.ranks[static_cast<std::size_t>(from)],
                comm.ranks[static_cast<std::size_t>(to)], comm.handle,
                comm.ranks[static_cast<std::size_t>(from)], p.send->bytes,
                comm.ranks[static_cast<std::size_t>(to)], p.recv->bytes));
        }
        ready.push_back(Transfer{&comm, from, to, p.send->bytes,
                                 std::max(p.send->readyNs, p.recv->readyNs), op.sequence,
                                 std::max(p.send->groupOps, p.recv->groupOps),
                                 std::max(p.send->groupBytes, p.recv->groupBytes)});
        tickets.emplace_back(p.send->ticket, p.recv->ticket);
        m_open.erase(key);
    }
    if (ops.empty())
    {
        TransferDone(ticket, readyNs);
        return;
    }
    // Started only now that this batch is recorded: a transfer that ends at once
    // may complete batches, which lets streams move on and call Ready again.
    for (std::size_t i = 0; i < ready.size(); ++i)
    {
        const auto [sendTicket, recvTicket] = tickets[i];
        m_start(ready[i],
                [this, sendTicket, recvTicket](int64_t endNs)
                {
                    TransferDone(sendTicket, endNs);
                    TransferDone(recvTicket, endNs);
                });
    }
}

void P2PMatcher::TransferDone(uint64_t ticket, int64_t endNs)
{
    auto it = m_batches.find(ticket);
    if (it == m_batches.end())
    {
        return;
    }
    Batch& b = it->second;
    b.endNs = std::max(b.endNs, endNs);
    if (b.remaining > 0)
    {
        --b.remaining;
    }
    if (b.remaining == 0)
    {
        const Batch done = b;
        m_batches.erase(it);
        m_done(done.rank, ticket, done.endNs);
    }
}

std::vector<std::string> P2PMatcher::Incomplete() const
{
    std::vector<std::string> out;
    for (const auto& [key, p] : m_open)
    {
        const auto& [comm, from, to, sequence] = key;
        const int fromRank = p.comm->ranks[static_cast<std::size_t>(from)];
        const int toRank = p.comm->ranks[static_cast<std::size_t>(to)];
        if (p.send)
        {
            out.push_back(fmt::format(
                "send #{} of {} bytes from rank {} to rank {} on communicator {}: rank {} has "
                "not posted the matching receive",
                sequence, p.send->bytes, fromRank, toRank, comm, toRank));
        }
        else
        {
            out.push_back(fmt::format(
                "receive #{} of {} bytes by rank {} from rank {} on communicator {}: rank {} has "
                "not posted the matching send",
                sequence, p.recv->bytes, toRank, fromRank, comm, fromRank));
        }
    }
    return out;
}

} // namespace phantora
