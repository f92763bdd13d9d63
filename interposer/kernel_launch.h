// One kernel launch posted to the bridge, whichever API made it: the runtime's
// cudaLaunchKernel and nvcc's launch stubs (a host stub's address names the kernel) or
// the driver's cuLaunchKernel (a CUfunction, registered by driver_modules.cc).
#pragma once

#include "rank_client.h"

#include <cstddef>
#include <cuda_runtime_api.h>

namespace phantora::interposer
{

/// \p func: what KernelRegistry knows the kernel by.  cudaErrorInvalidConfiguration for
/// an empty grid or block or a block of more than 1024 threads, as the runtime says.
/// \p gap: whether the launch ends a host-time gap (RankClient::Gap: a runtime launch
/// does, a driver-API one does not).
cudaError_t LaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t sharedMem,
                         cudaStream_t stream, RankClient::Gap gap = RankClient::Gap::Ends);

} // namespace phantora::interposer
