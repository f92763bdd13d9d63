// What a rank that compiles (torch.compile: Inductor, then Triton) needs from its
// environment under the simulator, set only where the user set nothing:
//
// - TRITON_LIBCUDA_PATH: the folder of phantora's libcuda.so.1 (beside the interposer),
//   which Triton links its C driver module and launchers against; the interposer, preloaded,
//   answers their calls (there is no driver on the simulating machine);
// - TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR: one folder per user and simulated GPU
//   model, shared by the ranks of a run (and by later runs), apart from a real GPU's caches
//   on the same machine: autotuning's choices there follow the profile's times.
#pragma once

#include <map>
#include <string>

namespace phantora
{

/// The variables above that the calling process's environment lacks, for the ranks.
/// \p interposer: libphantora_interposer.so's path; \p gpuModel: the scenario's ("H200").
std::map<std::string, std::string> CompileEnvironment(const std::string& interposer,
                                                      const std::string& gpuModel);

} // namespace phantora
