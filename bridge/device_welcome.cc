#include "device_welcome.h"

namespace phantora
{

wire::Welcome DeviceWelcome(const Scenario& scenario)
{
    const auto& gpu = scenario.gpu;
    wire::Welcome w;
    w.gpuName = "NVIDIA " + gpu.model;
    w.gpuMemoryBytes = gpu.memoryBytes;
    w.deviceCount = static_cast<int32_t>(scenario.topology.gpusPerNode);
    w.smCount = gpu.smCount;
    w.ccMajor = gpu.ccMajor;
    w.ccMinor = gpu.ccMinor;
    return w;
}

} // namespace phantora
