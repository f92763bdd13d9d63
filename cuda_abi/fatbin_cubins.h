// The cubins (per-architecture ELF images) inside a CUDA fat binary: what nvcc embeds in
// a program or library and hands to __cudaRegisterFatBinary at load time.  CUDA 13's
// nvcc compresses each cubin with zstd by default; both forms are read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace phantora::kernel_args
{

/// The fat binary __cudaRegisterFatBinary was given: nvcc's wrapper struct (magic
/// 0x466243b1) pointing at a container, or a container itself (magic 0xba55ed50).
/// Empty if neither: a relocatable-device-code registration names no single container.
std::string_view FatbinContainerAt(const void* registered);

/// Each container, in order, in a library's ".nv_fatbin" section.
std::vector<std::string_view> FatbinContainers(std::string_view section);

/// The container's cubin entries as stored (maybe compressed), in order; PTX is skipped.
std::vector<std::string_view> CubinEntries(std::string_view container);

/// One entry's cubin, decompressed; empty if the entry is compressed with anything but
/// zstd (CUDA 11/12's own scheme) or is damaged.
std::string CubinImage(std::string_view entry);

} // namespace phantora::kernel_args
