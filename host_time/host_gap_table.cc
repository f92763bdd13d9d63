#include "host_gap_table.h"

#include "host_boundary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

namespace phantora::host_time
{

namespace
{

constexpr char kMagic[4] = {'H', 'G', 'T', '2'};

/// The keys of a call's own cost, most specific first.
std::array<std::pair<uint64_t, Source>, 4> CallKeys(const HostLabel& l)
{
    return {{{Combine(0x6a09e667f3bcc908ull, l.full), Source::Context},
             {Combine(0xbb67ae8584caa73bull, l.module), Source::ModuleContext},
             {Combine(0x3c6ef372fe94f82bull, l.bare), Source::BareContext},
             {Combine(0xa54ff53a5f1d36f1ull, l.kind), Source::Kind}}};
}

int64_t Median(std::vector<int64_t>& v)
{
    const std::size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const int64_t upper = v[mid];
    if (v.size() % 2 == 1)
    {
        return upper;
    }
    const int64_t lower =
        *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return lower + (upper - lower) / 2;
}

} // namespace

int64_t ExpectedGap(std::vector<int64_t> samples)
{
    if (samples.empty())
    {
        return 0;
    }
    const int64_t median = Median(samples);
    std::vector<int64_t> deviation;
    deviation.reserve(samples.size());
    for (int64_t x : samples)
    {
        deviation.push_back(x > median ? x - median : median - x);
    }
    // 1.4826 x MAD estimates a normal distribution's sigma; 3 sigma is the usual cut.
    const double spread = kWinsorSigmas * 1.4826 * static_cast<double>(Median(deviation));
    const double low = static_cast<double>(median) - spread;
    const double high = static_cast<double>(median) + spread;
    double sum = 0;
    for (int64_t x : samples)
    {
        sum += std::clamp(static_cast<double>(x), low, high);
    }
    return std::llround(sum / static_cast<double>(samples.size()));
}

namespace
{

template <class T> void Put(std::string& out, T v)
{
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    out.append(b, sizeof v);
}

template <class T> T Take(std::string_view& in)
{
    if (in.size() < sizeof(T))
    {
        throw std::invalid_argument("host-time table: truncated");
    }
    T v;
    std::memcpy(&v, in.data(), sizeof v);
    in.remove_prefix(sizeof v);
    return v;
}

} // namespace

const char* SourceName(Source s)
{
    switch (s)
    {
    case Source::Context:
        return "context";
    case Source::ModuleContext:
        return "context (module)";
    case Source::BareContext:
        return "context (no site)";
    case Source::Kind:
        return "call kind";
    case Source::Global:
        return "recording median";
    case Source::Measured:
        return "measured here";
    }
    return "?";
}

void Context::Push(const HostLabel& label)
{
    m_ring[static_cast<std::size_t>(m_next)] = {label.full, label.module, label.bare, label.kind};
    m_next = (m_next + 1) % kDepth;
    m_count = std::min(m_count + 1, kDepth);
}

int64_t Reduce(std::vector<int64_t> samples, GapStatistic statistic)
{
    if (samples.empty())
    {
        return 0;
    }
    return statistic == GapStatistic::Mean ? ExpectedGap(std::move(samples)) : Median(samples);
}

const HostLabel& GapSamples::Label(const std::string& text)
{
    auto it = m_labels.find(text);
    if (it == m_labels.end())
    {
        it = m_labels.emplace(text, HostLabel::FromText(text)).first;
    }
    return it->second;
}

void GapSamples::Add(const Sequence& s, double scale, std::size_t from)
{
    if (s.labels.size() != s.gapBeforeNs.size())
    {
        throw std::invalid_argument("host-time sequence: labels and gaps differ in length");
    }
    const auto scaled = [scale](int64_t ns)
    { return scale == 1.0 ? ns : std::llround(static_cast<double>(ns) * scale); };
    for (std::size_t i = from; i < s.callNs.size() && i < s.labels.size(); ++i)
    {
        if (s.callNs[i] >= 0)
        {
            for (const auto& [key, source] : CallKeys(Label(s.labels[i])))
            {
                m_calls[key].push_back(scaled(s.callNs[i]));
            }
        }
    }
    Context ctx;
    for (std::size_t i = 0; i + 1 < s.labels.size(); ++i)
    {
        ctx.Push(Label(s.labels[i]));
        if (i < from || s.gapBeforeNs[i + 1] < 0)
        {
            continue;
        }
        // A key's samples are kept in the order of the sequences, whatever the hashes, so
        // a mean sums them in the same order on every machine.
        const int64_t gap = scaled(s.gapBeforeNs[i + 1]);
        const bool kindOnly =
            m_keys == Keys::KindAfterWaits &&
            boundary::Waits(std::string_view(s.labels[i]).substr(0, s.labels[i].rfind('@')));
        ctx.ForEachKey(
            [&](uint64_t key, Source source)
            {
                if (!kindOnly || source == Source::Kind)
                {
                    m_gaps[key].push_back(gap);
                }
            },
            m_maxDepth);
        m_all.push_back(gap);
    }
}

GapTable GapSamples::Reduce(GapStatistic statistic) const
{
    std::unordered_map<uint64_t, int64_t> gaps;
    gaps.reserve(m_gaps.size());
    for (const auto& [key, v] : m_gaps)
    {
        gaps.emplace(key, host_time::Reduce(v, statistic));
    }
    std::unordered_map<uint64_t, int64_t> calls;
    for (const auto& [key, v] : m_calls)
    {
        calls.emplace(key, host_time::Reduce(v, statistic));
    }
    return GapTable::FromFigures(
        std::move(gaps), std::move(calls),
        m_all.empty() ? std::nullopt : std::optional(host_time::Reduce(m_all, statistic)));
}

GapTable GapTable::Build(const std::vector<Sequence>& threads, GapStatistic statistic)
{
    GapSamples samples;
    for (const Sequence& s : threads)
    {
        samples.Add(s);
    }
    return samples.Reduce(statistic);
}

GapTable GapTable::FromFigures(std::unordered_map<uint64_t, int64_t> gaps,
                               std::unordered_map<uint64_t, int64_t> calls,
                               std::optional<int64_t> global)
{
    GapTable t;
    t.m_ns = std::move(gaps);
    t.m_call = std::move(calls);
    t.m_global = global;
    return t;
}

std::optional<GapTable::Hit> GapTable::Lookup(const Context& context) const
{
    if (!m_global)
    {
        return std::nullopt;
    }
    std::optional<Hit> hit;
    context.ForEachKey(
        [&](uint64_t key, Source source)
        {
            if (!hit)
            {
                if (auto it = m_ns.find(key); it != m_ns.end())
                {
                    hit = Hit{it->second, source};
                }
            }
        });
    return hit ? hit : Hit{*m_global, Source::Global};
}

std::optional<GapTable::Hit> GapTable::CallCost(const HostLabel& label) const
{
    for (const auto& [key, source] : CallKeys(label))
    {
        if (auto it = m_call.find(key); it != m_call.end())
        {
            return Hit{it->second, source};
        }
    }
    return std::nullopt;
}

namespace
{
void PutMap(std::string& out, const std::unordered_map<uint64_t, int64_t>& m)
{
    std::vector<std::pair<uint64_t, int64_t>> sorted(m.begin(), m.end());
    std::sort(sorted.begin(), sorted.end());
    Put<uint64_t>(out, sorted.size());
    for (const auto& [key, ns] : sorted)
    {
        Put(out, key);
        Put(out, ns);
    }
}

void TakeMap(std::string_view& in, std::unordered_map<uint64_t, int64_t>& m)
{
    const auto n = Take<uint64_t>(in);
    if (n > in.size() / 16)
    {
        throw std::invalid_argument("host-time table: truncated");
    }
    m.reserve(n);
    for (uint64_t i = 0; i < n; ++i)
    {
        const auto key = Take<uint64_t>(in);
        m.emplace(key, Take<int64_t>(in));
    }
}
} // namespace

std::string GapTable::Serialize() const
{
    std::string out(kMagic, sizeof kMagic);
    Put<uint8_t>(out, m_global ? 1 : 0);
    Put<int64_t>(out, m_global.value_or(0));
    PutMap(out, m_ns);
    PutMap(out, m_call);
    return out;
}

GapTable GapTable::Parse(std::string_view in)
{
    GapTable t;
    if (in.empty())
    {
        return t;
    }
    if (in.size() < sizeof kMagic || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0)
    {
        throw std::invalid_argument("host-time table: not a table");
    }
    in.remove_prefix(sizeof kMagic);
    const bool hasGlobal = Take<uint8_t>(in) != 0;
    const auto global = Take<int64_t>(in);
    if (hasGlobal)
    {
        t.m_global = global;
    }
    TakeMap(in, t.m_ns);
    TakeMap(in, t.m_call);
    return t;
}

} // namespace phantora::host_time
