// Copies and memsets without a profile: their duration from the scenario's PCIe and
// HBM bandwidths, and the name a trace gives them.
#pragma once

#include "gpu_model/profile/op_key.h"
#include "protocol/messages.h"
#include "scenario.h"

#include <cstdint>
#include <string>

namespace phantora
{

/// How long \p kind over \p bytes takes on \p gpu at its bandwidths.
int64_t CopyDurationNs(const GpuSpec& gpu, wire::CopyKind kind, uint64_t bytes);

/// The profile's key of \p kind over \p bytes (profile::KeyForCopy).
profile::OpKey CopyKey(wire::CopyKind kind, uint64_t bytes);

/// "memcpy HtoD 4096 B", "memset 64 B", ...
std::string CopyLabel(wire::CopyKind kind, uint64_t bytes);

} // namespace phantora
