// Each communicator's NCCL settings: the scenario's [nccl] table with the NCCL_*
// variables its ranks had when they created it (NCCL reads them per process, at
// creation, and needs them equal on every member).
#pragma once

#include "engine/communicator_registry.h"
#include "nccl/config.h"
#include "nccl/environment.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace phantora
{

class NcclSettings
{
public:
    /// \p scenarioNccl (the scenario's [nccl] table) must outlive this.
    explicit NcclSettings(const nccl::Config& scenarioNccl);

    /// The tuning variables \p rank had in its latest communicator creation call.
    void RecordCreation(int rank, const nccl::Environment& env);
    /// Fixes the NCCL settings of each communicator among \p members from the tuning
    /// variables its ranks had at creation (parsed by nccl::WithEnvironment).  Throws
    /// SimulationError when they disagree or NCCL would refuse a value.
    void Settle(const std::vector<std::pair<int, const Communicator*>>& members);
    /// The scenario's [nccl] table with the communicator's NCCL_* variables applied.
    const nccl::Config& For(const Communicator& comm) const;

private:
    const nccl::Config& m_scenarioNccl;
    std::map<int, nccl::Environment> m_creationTuning; ///< rank -> its communicator call's
    std::map<uint64_t, nccl::Config> m_commNccl;      ///< communicator handle -> settings
};

} // namespace phantora
