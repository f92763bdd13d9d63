#include "p2p_matcher.h"

#include <algorithm>
#include <fmt/format.h>

namespace phantora
{

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
