// The cudaDeviceProp of the scenario's GPU, shared by every device query.
#pragma once

#include "protocol/messages.h"

#include <cuda_runtime_api.h>

namespace phantora::interposer
{

void FillDeviceProperties(const wire::Welcome& w, int device, cudaDeviceProp& p);

} // namespace phantora::interposer
