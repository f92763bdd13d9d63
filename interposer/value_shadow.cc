#include "value_shadow.h"

#include "never_destroyed.h"
#include "protocol/messages.h"
#include "rank_client.h"
#include "sim_clock.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace phantora::interposer
{

namespace
{
constinit NeverDestroyed<ValueShadow> g_shadow; // outlives static destructors
} // namespace

ValueShadow& ValueShadow::Get()
{
    return *g_shadow;
}

void ValueShadow::ForgetLocked(uint64_t dst, std::size_t n)
{
    if (n == 0)
    {
        return;
    }
    const uint64_t end = dst + n;
    // Known bytes: trim or split the ranges that overlap.
    auto it = m_bytes.lower_bound(dst);
    if (it != m_bytes.begin())
    {
        --it;
    }
    while (it != m_bytes.end() && it->first < end)
    {
        const uint64_t s = it->first;
        const uint64_t e = s + it->second.size();
        if (e <= dst)
        {
            ++it;
            continue;
        }
        std::string bytes = std::move(it->second);
        it = m_bytes.erase(it);
        if (s < dst)
        {
            m_bytes.emplace(s, bytes.substr(0, dst - s));
        }
        if (e > end)
        {
            m_bytes.emplace(end, bytes.substr(end - s));
        }
    }
    // Pending results: an overlapped one is dropped whole (its other bytes read as zeros).
    auto p = m_pending.lower_bound(dst);
    if (p != m_pending.begin())
    {
        --p;
    }
    while (p != m_pending.end() && p->first < end)
    {
        p = p->second.end > dst ? m_pending.erase(p) : std::next(p);
    }
}

void ValueShadow::WriteLocked(uint64_t dst, const char* src, std::size_t n)
{
    ForgetLocked(dst, n);
    if (n > 0)
    {
        m_bytes.emplace(dst, std::string(src, n));
    }
}

void ValueShadow::Write(uint64_t dst, const void* src, std::size_t n)
{
    std::lock_guard lock(m_mutex);
    if (n > kMaxBytes)
    {
        ForgetLocked(dst, n);
        return;
    }
    WriteLocked(dst, static_cast<const char*>(src), n);
}

void ValueShadow::Forget(uint64_t dst, std::size_t n)
{
    std::lock_guard lock(m_mutex);
    ForgetLocked(dst, n);
}

void ValueShadow::MayWrite(const uint64_t* addresses, std::size_t count)
{
    std::lock_guard lock(m_mutex);
    if (m_bytes.empty() && m_pending.empty())
    {
        return;
    }
    for (std::size_t i = 0; i < count; ++i)
    {
        const uint64_t addr = addresses[i];
        auto it = m_bytes.upper_bound(addr); // the first piece starting after addr
        if (it != m_bytes.begin())
        {
            --it;
            const uint64_t end = it->first + it->second.size();
            if (addr < end)
            {
                ForgetLocked(addr, end - addr);
            }
        }
        auto p = m_pending.upper_bound(addr);
        if (p != m_pending.begin() && addr < std::prev(p)->second.end)
        {
            m_pending.erase(std::prev(p));
        }
    }
}

void ValueShadow::MarkPending(uint64_t dst, std::size_t n, const Source& source)
{
    std::lock_guard lock(m_mutex);
    ForgetLocked(dst, n);
    if (n > 0)
    {
        m_pending.emplace(dst, Pending{dst + n, source});
    }
}

void ValueShadow::Resolve(uint64_t src, std::size_t n, const Fetch& fetch,
                          std::unique_lock<std::mutex>& lock)
{
    const uint64_t end = src + n;
    for (;;)
    {
        auto p = m_pending.lower_bound(src);
        if (p != m_pending.begin() && std::prev(p)->second.end > src)
        {
            --p;
        }
        if (p == m_pending.end() || p->first >= end)
        {
            return;
        }
        const uint64_t start = p->first;
        const Pending pending = p->second;
        m_pending.erase(p);
        lock.unlock();
        std::optional<std::string> bytes = fetch ? fetch(pending.source) : std::nullopt;
        lock.lock();
        if (bytes && bytes->size() == pending.end - start)
        {
            WriteLocked(start, bytes->data(), bytes->size());
        }
    }
}

bool ValueShadow::ForEachKnownLocked(
    uint64_t src, std::size_t n,
    const std::function<bool(uint64_t, const char*, std::size_t)>& visit) const
{
    const uint64_t end = src + n;
    auto it = m_bytes.lower_bound(src);
    if (it != m_bytes.begin())
    {
        --it; // a range that starts before src may reach into it
    }
    for (; it != m_bytes.end() && it->first < end; ++it)
    {
        const uint64_t s = std::max<uint64_t>(it->first, src);
        const uint64_t e = std::min<uint64_t>(it->first + it->second.size(), end);
        if (s < e && !visit(s - src, it->second.data() + (s - it->first), e - s))
        {
            return false;
        }
    }
    return true;
}

void ValueShadow::Copy(uint64_t dst, uint64_t src, std::size_t n, const Fetch& fetch)
{
    std::unique_lock lock(m_mutex);
    if (n > kMaxBytes)
    {
        ForgetLocked(dst, n);
        return;
    }
    Resolve(src, n, fetch, lock);
    std::vector<std::pair<uint64_t, std::string>> pieces; // offset, bytes
    ForEachKnownLocked(src, n,
                       [&](uint64_t offset, const char* bytes, std::size_t len)
                       {
                           pieces.emplace_back(offset, std::string(bytes, len));
                           return true;
                       });
    ForgetLocked(dst, n);
    for (auto& [offset, bytes] : pieces)
    {
        m_bytes.emplace(dst + offset, std::move(bytes));
    }
}

bool ValueShadow::Read(void* dst, uint64_t src, std::size_t n, const Fetch& fetch)
{
    std::memset(dst, 0, n);
    std::unique_lock lock(m_mutex);
    if (m_bytes.empty() && m_pending.empty())
    {
        return false;
    }
    Resolve(src, n, fetch, lock);
    bool known = false;
    ForEachKnownLocked(src, n,
                       [&](uint64_t offset, const char* bytes, std::size_t len)
                       {
                           std::memcpy(static_cast<char*>(dst) + offset, bytes, len);
                           known = true;
                           return true;
                       });
    return known;
}

std::optional<std::string> ValueShadow::Known(uint64_t src, std::size_t n, const Fetch& fetch)
{
    std::unique_lock lock(m_mutex);
    if (n > kMaxBytes || (m_bytes.empty() && m_pending.empty()))
    {
        return std::nullopt;
    }
    Resolve(src, n, fetch, lock);
    std::string out(n, '\0');
    uint64_t covered = 0; // every byte before this offset is known
    const bool gapless = ForEachKnownLocked(src, n,
                                            [&](uint64_t offset, const char* bytes, std::size_t len)
                                            {
                                                if (offset > covered)
                                                {
                                                    return false;
                                                }
                                                std::memcpy(out.data() + offset, bytes, len);
                                                covered = std::max<uint64_t>(covered, offset + len);
                                                return true;
                                            });
    if (!gapless || covered < n)
    {
        return std::nullopt;
    }
    return out;
}

ValueShadow::Fetch BridgeFetch()
{
    return [](const ValueShadow::Source& source) -> std::optional<std::string>
    {
        wire::Reply reply =
            source.p2p
                ? RankClient::Get().Call(wire::P2PValues{source.comm, source.peer, source.sequence})
                : RankClient::Get().Call(wire::CollectiveValues{source.comm, source.sequence});
        auto* r = std::get_if<wire::CollectiveResult>(&reply);
        if (r)
        {
            // The values exist once every member issued the collective, or the peer the
            // send (wait_answers.cc).
            SimClock::Get().AdvanceTo(r->clockNs);
        }
        if (!r || !r->known)
        {
            return std::nullopt;
        }
        return std::move(r->values);
    };
}

} // namespace phantora::interposer
