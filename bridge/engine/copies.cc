#include "engine/copies.h"

#include <cmath>
#include <fmt/format.h>

namespace phantora
{

int64_t CopyDurationNs(const GpuSpec& gpu, wire::CopyKind kind, uint64_t bytes)
{
    const double bits = static_cast<double>(bytes) * 8.0;
    switch (kind)
    {
    case wire::CopyKind::HostToHost:
        return 0;
    case wire::CopyKind::HostToDevice:
    case wire::CopyKind::DeviceToHost:
        return std::llround(bits / gpu.pcieBitsPerSecond * 1e9);
    case wire::CopyKind::DeviceToDevice:
        // read and write both cross the HBM
        return std::llround(2.0 * bits / gpu.hbmBitsPerSecond * 1e9);
    case wire::CopyKind::Memset:
        return std::llround(bits / gpu.hbmBitsPerSecond * 1e9);
    }
    return 0;
}

profile::OpKey CopyKey(wire::CopyKind kind, uint64_t bytes)
{
    switch (kind)
    {
    case wire::CopyKind::HostToHost:
        return profile::KeyForCopy("HtoH", bytes);
    case wire::CopyKind::HostToDevice:
        return profile::KeyForCopy("HtoD", bytes);
    case wire::CopyKind::DeviceToHost:
        return profile::KeyForCopy("DtoH", bytes);
    case wire::CopyKind::DeviceToDevice:
        return profile::KeyForCopy("DtoD", bytes);
    case wire::CopyKind::Memset:
        return profile::KeyForCopy("memset", bytes);
    }
    return profile::KeyForCopy("?", bytes);
}

std::string CopyLabel(wire::CopyKind kind, uint64_t bytes)
{
    static constexpr const char* kNames[] = {"memcpy HtoH", "memcpy HtoD", "memcpy DtoH",
                                             "memcpy DtoD", "memset"};
    return fmt::format("{} {} B", kNames[static_cast<int>(kind)], bytes);
}

} // namespace phantora
