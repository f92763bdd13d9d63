#include "host_label.h"

namespace phantora::host_time
{

uint64_t Fnv1a(std::string_view bytes, uint64_t seed)
{
    uint64_t h = seed;
    for (const char c : bytes)
    {
        h ^= static_cast<uint8_t>(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t Combine(uint64_t seed, uint64_t value)
{
    // splitmix64's finaliser over the pair: cheap, and no two orders of the same values
    // collide in practice.
    uint64_t z = seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

HostLabel HostLabel::FromText(std::string_view text)
{
    const auto at = text.rfind('@');
    if (at == std::string_view::npos)
    {
        return Make(text, {});
    }
    return Make(text.substr(0, at), text.substr(at + 1));
}

HostLabel HostLabel::Make(std::string_view what, std::string_view site)
{
    HostLabel l;
    l.text.reserve(what.size() + site.size() + 1);
    l.text.append(what).append("@").append(site);
    const auto plus = site.rfind('+');
    const std::string_view module = plus == std::string_view::npos ? site : site.substr(0, plus);
    l.full = Fnv1a(l.text);
    l.module = Combine(Fnv1a(what), Fnv1a(module));
    l.bare = Fnv1a(what);
    const auto colon = what.find(':');
    l.kind = Fnv1a(colon == std::string_view::npos ? what : what.substr(0, colon), 0x1234567ull);
    return l;
}

} // namespace phantora::host_time
