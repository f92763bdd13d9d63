#include "engine/nccl_settings.h"

#include "engine/simulation_error.h"

#include <fmt/format.h>
#include <stdexcept>

namespace phantora
{

NcclSettings::NcclSettings(const nccl::Config& scenarioNccl) : m_scenarioNccl(scenarioNccl) {}

void NcclSettings::RecordCreation(int rank, const nccl::Environment& env)
{
    m_creationTuning[rank] = env;
}

void NcclSettings::Settle(const std::vector<std::pair<int, const Communicator*>>& members)
{
    // Members are listed by communicator; the first listed member of each is the
    // reference the others must match.
    std::map<uint64_t, int> reference;
    for (const auto& [rank, comm] : members)
    {
        if (!comm)
        {
            continue; // NCCL_SPLIT_NOCOLOR
        }
        const nccl::Environment& env = m_creationTuning[rank];
        auto [it, first] = reference.emplace(comm->handle, rank);
        if (first)
        {
            try
            {
                m_commNccl[comm->handle] = nccl::WithEnvironment(m_scenarioNccl, env);
            }
            catch (const std::invalid_argument& e)
            {
                throw SimulationError(
                    fmt::format("rank {} created a communicator with {}", rank, e.what()));
            }
            continue;
        }
        const nccl::Environment& ref = m_creationTuning[it->second];
        if (!(env == ref))
        {
            throw SimulationError(fmt::format(
                "ranks {} and {} created one communicator with different NCCL settings "
                "(NCCL_ALGO '{}' / '{}', NCCL_PROTO '{}' / '{}', NCCL_MIN_NCHANNELS '{}' / '{}', "
                "NCCL_MAX_NCHANNELS '{}' / '{}', NCCL_NVLS_ENABLE '{}' / '{}'); NCCL needs them "
                "equal on every rank",
                it->second, rank, ref.algo, env.algo, ref.proto, env.proto, ref.minChannels,
                env.minChannels, ref.maxChannels, env.maxChannels, ref.nvlsEnable, env.nvlsEnable));
        }
    }
}

const nccl::Config& NcclSettings::For(const Communicator& comm) const
{
    auto it = m_commNccl.find(comm.handle);
    return it == m_commNccl.end() ? m_scenarioNccl : it->second;
}

} // namespace phantora
