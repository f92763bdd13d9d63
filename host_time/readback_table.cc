#include "readback_table.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace phantora::host_time
{

namespace
{

constexpr char kMagic[4] = {'R', 'B', 'T', '1'};

/// A read's key: the context key (the copy last) with the read's size.
uint64_t ReadKey(uint64_t contextKey, std::size_t size)
{
    return Combine(Combine(contextKey, 0x726561646261636bull), static_cast<uint64_t>(size));
}

template <class T> void Put(std::string& out, T v)
{
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

template <class T> T Take(std::string_view& in)
{
    if (in.size() < sizeof(T))
    {
        throw std::invalid_argument("read-back table: truncated");
    }
    T v;
    std::memcpy(&v, in.data(), sizeof(T));
    in.remove_prefix(sizeof(T));
    return v;
}

/// An element of \p width bytes as a number, and whether it looks like a float: zero, or
/// finite, normal and of magnitude 2^-100..2^100.
bool ElementLooksFloat(const char* p, std::size_t width, double* value)
{
    uint64_t bits = 0;
    int exponent = 0;
    bool zero = false;
    switch (width)
    {
    case 8:
    {
        std::memcpy(&bits, p, 8);
        zero = (bits << 1) == 0;
        const int e = static_cast<int>((bits >> 52) & 0x7ff);
        if (!zero && (e == 0 || e == 0x7ff))
        {
            return false;
        }
        exponent = e - 1023;
        double d;
        std::memcpy(&d, p, 8);
        *value = d;
        break;
    }
    case 4:
    {
        uint32_t b32 = 0;
        std::memcpy(&b32, p, 4);
        zero = (b32 << 1) == 0;
        const int e = static_cast<int>((b32 >> 23) & 0xff);
        if (!zero && (e == 0 || e == 0xff))
        {
            return false;
        }
        exponent = e - 127;
        float f;
        std::memcpy(&f, p, 4);
        *value = f;
        break;
    }
    case 2:
    {
        // bfloat16: a float32's upper half.  IEEE half-precision values of moderate
        // magnitude look like (different) bfloat16 ones and pass too.
        uint16_t b16 = 0;
        std::memcpy(&b16, p, 2);
        zero = static_cast<uint16_t>(b16 << 1) == 0;
        const int e = (b16 >> 7) & 0xff;
        if (!zero && (e == 0 || e == 0xff))
        {
            return false;
        }
        exponent = e - 127;
        const uint32_t b32 = static_cast<uint32_t>(b16) << 16;
        float f;
        std::memcpy(&f, &b32, 4);
        *value = f;
        break;
    }
    default:
        return false;
    }
    return zero || (exponent >= -100 && exponent <= 100);
}

bool FitsWidth(std::string_view bytes, std::size_t width)
{
    if (bytes.empty() || bytes.size() % width != 0)
    {
        return false;
    }
    double v = 0;
    for (std::size_t i = 0; i < bytes.size(); i += width)
    {
        if (!ElementLooksFloat(bytes.data() + i, width, &v))
        {
            return false;
        }
    }
    return true;
}

/// What a key of \p samples (all of one size, in recorded order) returns.
ReadbackTable::Entry Representative(const std::vector<std::string>& samples)
{
    ReadbackTable::Entry e;
    e.samples = static_cast<uint32_t>(samples.size());
    e.stable = std::all_of(samples.begin(), samples.end(),
                           [&](const std::string& s) { return s == samples.front(); });
    std::size_t width = 0;
    for (std::size_t w : {std::size_t{8}, std::size_t{4}, std::size_t{2}})
    {
        if (std::all_of(samples.begin(), samples.end(),
                        [&](const std::string& s) { return FitsWidth(s, w); }))
        {
            width = w;
            break;
        }
    }
    e.floatLike = width != 0;
    if (e.floatLike)
    {
        // Element by element, the lower median: a value that some recorded read had.
        e.bytes = samples.front();
        std::vector<std::pair<double, std::size_t>> column(samples.size());
        for (std::size_t at = 0; at < e.bytes.size(); at += width)
        {
            for (std::size_t i = 0; i < samples.size(); ++i)
            {
                column[i].second = i;
                ElementLooksFloat(samples[i].data() + at, width, &column[i].first);
            }
            const std::size_t mid = (samples.size() - 1) / 2;
            std::nth_element(column.begin(), column.begin() + static_cast<std::ptrdiff_t>(mid),
                             column.end());
            std::memcpy(e.bytes.data() + at, samples[column[mid].second].data() + at, width);
        }
        return e;
    }
    // The most frequent bytes; of equally frequent ones, the latest recorded.
    std::map<std::string, std::pair<std::size_t, std::size_t>> counts; // bytes -> count, last
    for (std::size_t i = 0; i < samples.size(); ++i)
    {
        auto& [count, last] = counts[samples[i]];
        ++count;
        last = i;
    }
    const auto best =
        std::max_element(counts.begin(), counts.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    e.bytes = best->first;
    return e;
}

} // namespace

std::size_t ReadbackTable::FloatWidth(std::string_view bytes)
{
    for (std::size_t w : {std::size_t{8}, std::size_t{4}, std::size_t{2}})
    {
        if (FitsWidth(bytes, w))
        {
            return w;
        }
    }
    return 0;
}

ReadbackTable ReadbackTable::Build(const std::vector<Sequence>& threads)
{
    struct Samples
    {
        std::vector<std::string> values;
        std::set<uint64_t> leaves; ///< the longest keys of the reads gathered here
    };
    // std::map: samples are gathered in a fixed order, whatever the hashes.
    std::map<uint64_t, Samples> byKey;
    ReadbackTable t;
    for (const Sequence& s : threads)
    {
        Context ctx;
        std::size_t pushed = 0;
        for (const auto& [at, bytes] : s.reads)
        {
            if (at >= s.labels.size())
            {
                throw std::invalid_argument("read-back at call " + std::to_string(at) +
                                            " of a thread that made " +
                                            std::to_string(s.labels.size()));
            }
            while (pushed <= at)
            {
                ctx.Push(HostLabel::FromText(s.labels[pushed++]));
            }
            if (bytes.empty() || bytes.size() > kMaxReadbackBytes)
            {
                continue;
            }
            ++t.m_reads;
            std::optional<uint64_t> leaf;
            ctx.ForEachKey(
                [&](uint64_t key, Source source)
                {
                    if (source == Source::Kind)
                    {
                        return; // every copy of this size: too coarse for a value
                    }
                    const uint64_t k = ReadKey(key, bytes.size());
                    if (!leaf)
                    {
                        leaf = k;
                    }
                    Samples& samples = byKey[k];
                    samples.values.push_back(bytes);
                    samples.leaves.insert(*leaf);
                });
        }
    }
    std::unordered_map<uint64_t, Entry> all;
    all.reserve(byKey.size());
    for (const auto& [key, samples] : byKey)
    {
        all.emplace(key, Representative(samples.values));
    }
    for (const auto& [key, samples] : byKey)
    {
        const Entry& mine = all.at(key);
        // A shorter key standing for several reads: only where they would all read the same.
        const bool agree =
            std::all_of(samples.leaves.begin(), samples.leaves.end(),
                        [&](uint64_t leaf)
                        {
                            const Entry& other = all.at(leaf);
                            return other.bytes == mine.bytes && other.floatLike == mine.floatLike;
                        });
        if (agree)
        {
            t.m_entries.emplace(key, mine);
        }
    }
    return t;
}

ReadbackTable ReadbackTable::Filtered(ReadbackMode mode) const
{
    ReadbackTable t;
    t.m_reads = m_reads;
    if (mode == ReadbackMode::Zeros)
    {
        return t;
    }
    for (const auto& [key, entry] : m_entries)
    {
        if (mode == ReadbackMode::All || entry.floatLike)
        {
            t.m_entries.emplace(key, entry);
        }
    }
    return t;
}

const ReadbackTable::Entry* ReadbackTable::Lookup(const Context& context, std::size_t size) const
{
    const Entry* hit = nullptr;
    if (m_entries.empty() || size == 0 || size > kMaxReadbackBytes)
    {
        return hit;
    }
    context.ForEachKey(
        [&](uint64_t key, Source source)
        {
            if (hit || source == Source::Kind)
            {
                return;
            }
            if (auto it = m_entries.find(ReadKey(key, size)); it != m_entries.end())
            {
                hit = &it->second;
            }
        });
    return hit;
}

std::string ReadbackTable::Serialize() const
{
    if (m_entries.empty())
    {
        return {};
    }
    std::string out(kMagic, sizeof kMagic);
    Put<uint64_t>(out, m_reads);
    std::vector<std::pair<uint64_t, const Entry*>> sorted;
    sorted.reserve(m_entries.size());
    for (const auto& [key, entry] : m_entries)
    {
        sorted.emplace_back(key, &entry);
    }
    std::sort(sorted.begin(), sorted.end());
    Put<uint64_t>(out, sorted.size());
    for (const auto& [key, e] : sorted)
    {
        Put(out, key);
        Put<uint8_t>(out, static_cast<uint8_t>((e->floatLike ? 1 : 0) | (e->stable ? 2 : 0)));
        Put<uint32_t>(out, e->samples);
        Put<uint8_t>(out, static_cast<uint8_t>(e->bytes.size()));
        out += e->bytes;
    }
    return out;
}

ReadbackTable ReadbackTable::Parse(std::string_view in)
{
    ReadbackTable t;
    if (in.empty())
    {
        return t;
    }
    if (in.size() < sizeof kMagic || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0)
    {
        throw std::invalid_argument("read-back table: not a table");
    }
    in.remove_prefix(sizeof kMagic);
    t.m_reads = Take<uint64_t>(in);
    const auto n = Take<uint64_t>(in);
    if (n > in.size() / 15)
    {
        throw std::invalid_argument("read-back table: truncated");
    }
    t.m_entries.reserve(n);
    for (uint64_t i = 0; i < n; ++i)
    {
        const auto key = Take<uint64_t>(in);
        const auto flags = Take<uint8_t>(in);
        Entry e;
        e.floatLike = (flags & 1) != 0;
        e.stable = (flags & 2) != 0;
        e.samples = Take<uint32_t>(in);
        const auto len = Take<uint8_t>(in);
        if (len == 0 || len > kMaxReadbackBytes || in.size() < len)
        {
            throw std::invalid_argument("read-back table: truncated");
        }
        e.bytes.assign(in.data(), len);
        in.remove_prefix(len);
        t.m_entries.emplace(key, std::move(e));
    }
    if (!in.empty())
    {
        throw std::invalid_argument("read-back table: trailing bytes");
    }
    return t;
}

} // namespace phantora::host_time
