// The name a recorded or simulated program goes by, so that a simulation can prefer the
// measurements taken while that same program ran: a kernel's cost can depend on its
// arguments (a softmax on its row length), which an op's key does not hold.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace phantora::profile
{

/// The program `gpu_profiler replay` runs its ops under (gpu_profiler_gpu): its copies
/// are from and to pinned host memory, where a program's own are mostly pageable.
inline constexpr std::string_view kReplayProgram = "gpu_profiler_gpu";

/// "train_gpt.py" for `python3 -u path/train_gpt.py --steps 6`, and also for
/// `torchrun --nproc_per_node 1 train_gpt.py` or `python -m torch.distributed.run ...
/// train_gpt.py` (launchers name what they launch); "mymod" for `python -m mymod`;
/// "phantora-cuda-train-step" for `build/.../phantora-cuda-train-step 1`; "" for an empty
/// command.
std::string ProgramName(const std::vector<std::string>& argv);

/// The same for a command kept as one line (words separated by spaces).
std::string ProgramName(const std::string& commandLine);

/// What the program was given: the words after the one that names it (ProgramName), joined
/// by spaces; "--mode fsdp --layers 12" for `torchrun --nproc_per_node 1 gpt.py --mode fsdp
/// --layers 12`.  A recording of the same program with the same arguments runs the same
/// code as the simulation, whatever the launcher or the number of ranks.
std::string ProgramArguments(const std::vector<std::string>& argv);
std::string ProgramArguments(const std::string& commandLine);

/// How many processes the command's launcher starts: 2 for `torchrun --nproc_per_node 2
/// gpt.py` (times `--nnodes`), `mpirun -np 4 ...`, `srun -n 4 ...`, `deepspeed --num_gpus
/// 2 ...`; 1 for a program started by itself.  A recording at world size 2 ran the code a
/// multi-rank run runs (collectives, FSDP's all-gathers), which one rank never reaches.
int LaunchedRanks(const std::vector<std::string>& argv);
int LaunchedRanks(const std::string& commandLine);

} // namespace phantora::profile
