// Whether a rank's program has the CUDA runtime linked into it (nvcc's default,
// -cudart static): its CUDA calls never reach the interposer's libcudart entry points, so
// phantora-cluster refuses it before starting a rank, saying how to rebuild it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace phantora
{

/// \p command0 as exec would find it (PATH searched for a bare name); nullopt if not found.
std::optional<std::filesystem::path> FindProgram(const std::string& command0);

/// Whether \p program is an ELF file that holds the CUDA runtime itself: the static
/// runtime's own strings (its shared-memory names) are in it.
bool LinksCudaRuntimeStatically(const std::filesystem::path& program);

} // namespace phantora
