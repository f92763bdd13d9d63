#include "launch_facts.h"

#include <charconv>
#include <string>

namespace phantora
{

std::optional<uint64_t> LaunchFact(std::string_view facts, std::string_view key)
{
    std::size_t at = 0;
    while (at < facts.size())
    {
        const std::size_t end = std::min(facts.find(',', at), facts.size());
        const std::string_view item = facts.substr(at, end - at);
        if (item.size() > key.size() && item.substr(0, key.size()) == key &&
            item[key.size()] == '=')
        {
            uint64_t v = 0;
            const std::string_view digits = item.substr(key.size() + 1);
            auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
            if (ec == std::errc{} && p == digits.data() + digits.size())
            {
                return v;
            }
            return std::nullopt;
        }
        at = end + 1;
    }
    return std::nullopt;
}

std::optional<uint64_t> ArgFact(std::string_view facts, int ordinal)
{
    return LaunchFact(facts, std::to_string(ordinal));
}

} // namespace phantora
