// NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS: NCCL reads them in
// each process when it creates a communicator, and they override the site defaults
// (here the scenario's [nccl] table).
#pragma once

#include "nccl/config.h"
#include "protocol/messages.h"

namespace phantora
{

/// The variables as this process has them.
wire::NcclTuningEnv NcclTuningEnvFromProcess();

/// \p config with \p env's settings applied.  Throws std::invalid_argument naming the
/// variable, its value and what was expected.
nccl::Config WithNcclTuningEnv(nccl::Config config, const wire::NcclTuningEnv& env);

} // namespace phantora
