// The named sections of a 64-bit little-endian ELF image held in memory: a CUDA cubin
// (where each kernel's parameter layout lives) or a shared library (whose .nv_fatbin
// section holds the cubins of the kernels it registers).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace phantora::kernel_args
{

/// Calls \p visit(name, contents) for each section with contents in the image.  Returns
/// false, visiting nothing, if \p image is not a well-formed 64-bit ELF: every offset is
/// checked against the image's size, since the bytes come from a program we do not own.
bool ForEachElfSection(std::string_view image,
                       const std::function<void(std::string_view, std::string_view)>& visit);

/// The extent of a 64-bit ELF image at \p image whose size nobody gave (a cubin passed to
/// cuModuleLoadData): the end of its section or program header table, whichever is later
/// (nvcc, NVRTC and ptxas put the section headers last); 0 when it is no ELF64 image.
std::size_t ElfImageSize(const void* image);

} // namespace phantora::kernel_args
