#include "environment.h"

#include "config.h"
#include "selection.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace phantora::nccl
{

namespace
{

std::optional<uint32_t> Channels(const char* name, const std::string& value)
{
    if (value.empty())
    {
        return std::nullopt;
    }
    char* end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    // NCCL's MAXCHANNELS is 64.
    if (*end != '\0' || n < 1 || n > 64)
    {
        throw std::invalid_argument(std::string(name) + "='" + value +
                                    "': expected a channel count from 1 to 64");
    }
    return static_cast<uint32_t>(n);
}

} // namespace

Config WithEnvironment(Config config, const Environment& env)
{
    // The selection's own errors name the variable and the offending token.
    if (!env.algo.empty())
    {
        ValidateAlgorithmSpec(env.algo);
        config.algorithm = env.algo;
    }
    if (!env.proto.empty())
    {
        ValidateProtocolSpec(env.proto);
        config.protocol = env.proto;
    }
    const auto lo = Channels("NCCL_MIN_NCHANNELS", env.minChannels);
    const auto hi = Channels("NCCL_MAX_NCHANNELS", env.maxChannels);
    config.minChannels = lo.value_or(config.minChannels);
    config.maxChannels = hi.value_or(config.maxChannels);
    if (lo && hi && *lo > *hi)
    {
        throw std::invalid_argument("NCCL_MIN_NCHANNELS=" + std::to_string(*lo) +
                                    " is above NCCL_MAX_NCHANNELS=" + std::to_string(*hi));
    }
    // NCCL_NVLS_ENABLE: 0 off, 1 forced on, 2 (NCCL's default) on where the GPUs report
    // multicast support, which is what the scenario's nvls key says.
    if (!env.nvlsEnable.empty())
    {
        char* end = nullptr;
        const long v = std::strtol(env.nvlsEnable.c_str(), &end, 10);
        if (*end != '\0' || v < 0 || v > 2)
        {
            throw std::invalid_argument("NCCL_NVLS_ENABLE='" + env.nvlsEnable +
                                        "': expected 0, 1 or 2");
        }
        if (v == 1 && !config.nvlsEnable)
        {
            // NCCL then fails creating the multicast object on GPUs without the support.
            throw std::invalid_argument(
                "NCCL_NVLS_ENABLE=1 on a node without NVLS (the scenario's [nccl] nvls is false)");
        }
        config.nvlsEnable = config.nvlsEnable && v != 0;
    }
    // One bound given alone moves the other out of its way, as NCCL clamps them.
    if (config.minChannels > config.maxChannels)
    {
        (lo ? config.maxChannels : config.minChannels) =
            lo ? config.minChannels : config.maxChannels;
    }
    return config;
}

} // namespace phantora::nccl
