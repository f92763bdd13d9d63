#include "device_description.h"

#include <charconv>
#include <map>
#include <stdexcept>

namespace phantora::wire
{

std::string EncodeDeviceDescription(const Welcome& w)
{
    return "count=" + std::to_string(w.deviceCount) + ";sms=" + std::to_string(w.smCount) +
           ";cc=" + std::to_string(w.ccMajor) + "." + std::to_string(w.ccMinor) +
           ";memory=" + std::to_string(w.gpuMemoryBytes) + ";name=" + w.gpuName;
}

namespace
{

template <class T>
T Number(const std::map<std::string_view, std::string_view>& fields, std::string_view key,
         std::string_view text)
{
    auto it = fields.find(key);
    if (it == fields.end())
    {
        throw std::invalid_argument("device description '" + std::string(text) + "' has no '" +
                                    std::string(key) + "='");
    }
    T value{};
    const auto [end, ec] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
    if (ec != std::errc() || end != it->second.data() + it->second.size() || value < 0)
    {
        throw std::invalid_argument("device description '" + std::string(text) +
                                    "': " + std::string(key) + "='" + std::string(it->second) +
                                    "' is not a non-negative integer");
    }
    return value;
}

} // namespace

Welcome DecodeDeviceDescription(std::string_view text)
{
    std::map<std::string_view, std::string_view> fields;
    std::string_view rest = text;
    while (!rest.empty())
    {
        const auto eq = rest.find('=');
        if (eq == std::string_view::npos)
        {
            throw std::invalid_argument("device description '" + std::string(text) + "': '" +
                                        std::string(rest) + "' is not KEY=VALUE");
        }
        const std::string_view key = rest.substr(0, eq);
        if (key == "name")
        {
            fields[key] = rest.substr(eq + 1); // the rest, ';' included
            break;
        }
        const auto semi = rest.find(';', eq);
        fields[key] = rest.substr(eq + 1, semi == std::string_view::npos ? semi : semi - eq - 1);
        rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
    }
    Welcome w;
    w.deviceCount = Number<int32_t>(fields, "count", text);
    w.smCount = Number<int32_t>(fields, "sms", text);
    w.gpuMemoryBytes = Number<uint64_t>(fields, "memory", text);
    auto cc = fields.find("cc");
    const auto dot = cc == fields.end() ? std::string_view::npos : cc->second.find('.');
    if (dot == std::string_view::npos)
    {
        throw std::invalid_argument("device description '" + std::string(text) +
                                    "' has no 'cc=MAJOR.MINOR'");
    }
    const std::map<std::string_view, std::string_view> parts{
        {"cc major", cc->second.substr(0, dot)}, {"cc minor", cc->second.substr(dot + 1)}};
    w.ccMajor = Number<int32_t>(parts, "cc major", text);
    w.ccMinor = Number<int32_t>(parts, "cc minor", text);
    auto name = fields.find("name");
    if (name == fields.end() || name->second.empty())
    {
        throw std::invalid_argument("device description '" + std::string(text) +
                                    "' has no 'name='");
    }
    w.gpuName = std::string(name->second);
    if (w.deviceCount < 1)
    {
        throw std::invalid_argument("device description '" + std::string(text) +
                                    "': count must be at least 1");
    }
    return w;
}

} // namespace phantora::wire
