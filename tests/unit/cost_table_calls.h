// A kernel launch as the engine prices it: its profile key from the wire message, then the
// cost table (simulation_engine.cc does the same), for tests that build launches.
#pragma once

#include "gpu_model/kernel_cost_table.h"
#include "gpu_model/profile/op_key.h"
#include "protocol/messages.h"

namespace phantora::test
{

inline OpCost PriceLaunch(KernelCostTable& table, const wire::KernelLaunch& launch)
{
    return table.Kernel(
        profile::KeyForLaunch(launch.name, launch.grid, launch.block, launch.sharedMem),
        launch.args, launch.work);
}

} // namespace phantora::test
