// NCCL's tuning variables: NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS and
// NCCL_NVLS_ENABLE.  NCCL reads them in each process when it creates a communicator, and
// they override the site defaults (here the scenario's [nccl] table).
//
// The one place they are read and parsed.  A process takes them as it has them with
// Environment::OfProcess(): a rank's interposer does, at each ncclCommInitRank(Config) and
// ncclCommSplit, and sends them as they are (protocol/messages.h's NcclCommInit and
// NcclCommSplit carry this type); phantora-nccl-tests does, for its own process.  The
// bridge applies them to a communicator's settings with WithEnvironment(), which checks
// them as NCCL would.  This header needs no library (target phantora-nccl-environment), so
// the wire protocol and the interposer use it without linking the model;
// WithEnvironment() is in phantora-nccl.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace phantora::nccl
{

struct Config;

/// The variables as a process has them: the strings as they are, "" for unset.
struct Environment
{
    std::string algo;         ///< NCCL_ALGO
    std::string proto;        ///< NCCL_PROTO
    std::string minChannels;  ///< NCCL_MIN_NCHANNELS, or ncclConfig_t::minCTAs
    std::string maxChannels;  ///< NCCL_MAX_NCHANNELS, or ncclConfig_t::maxCTAs
    std::string nvlsEnable{}; ///< NCCL_NVLS_ENABLE
    bool operator==(const Environment&) const = default;

    /// This process's variables.  \p minCtas / \p maxCtas, the CTA bounds of the
    /// ncclConfig_t a communicator is created with (when given), stand for
    /// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS where those are unset.
    static Environment OfProcess(std::optional<int> minCtas = std::nullopt,
                                 std::optional<int> maxCtas = std::nullopt)
    {
        auto get = [](const char* name)
        {
            const char* v = std::getenv(name);
            return std::string(v ? v : "");
        };
        Environment e{get("NCCL_ALGO"), get("NCCL_PROTO"), get("NCCL_MIN_NCHANNELS"),
                      get("NCCL_MAX_NCHANNELS"), get("NCCL_NVLS_ENABLE")};
        if (e.minChannels.empty() && minCtas)
        {
            e.minChannels = std::to_string(*minCtas);
        }
        if (e.maxChannels.empty() && maxCtas)
        {
            e.maxChannels = std::to_string(*maxCtas);
        }
        return e;
    }
};

/// \p config with \p env's settings applied (include "nccl/config.h" to call it).  Throws
/// std::invalid_argument naming the variable, its value and what was expected.
Config WithEnvironment(Config config, const Environment& env);

} // namespace phantora::nccl
