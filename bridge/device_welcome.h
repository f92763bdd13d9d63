// The scenario's GPU as the interposer sees it: the device fields of the rank's Welcome,
// also given to every process the launcher starts (PHANTORA_GPU,
// protocol/device_description.h) so that a process that is no rank answers device queries
// with the same values without connecting.
#pragma once

#include "protocol/messages.h"
#include "scenario.h"

namespace phantora
{

/// gpuName, gpuMemoryBytes, deviceCount (GPUs per node), smCount, ccMajor, ccMinor.
wire::Welcome DeviceWelcome(const Scenario& scenario);

} // namespace phantora
