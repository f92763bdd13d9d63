// The host-time model of a profile (host_time/host_time_model.h) learned from the runs it
// recorded: what the bridge charges a program the profile holds no recording of, and
// what `phantora-host-model-accuracy` checks program by program, each left out in turn.
#pragma once

#include "host_time/host_gap_table.h"
#include "host_time/host_time_model.h"
#include "profile_reader.h"

#include <cstddef>
#include <set>
#include <string>

namespace phantora::profile
{

/// The median measured host speed (host_time/host_speed.h) of every run in \p profile that
/// has one: the host each recorded gap is scaled to before programs are compared; 0 if no
/// run has one.
double ReferenceHostNs(const ProfileReader& profile);

/// \p run's gaps multiply by this to be the reference host's: 1 where either speed is
/// unknown.
double ToReferenceHost(const ProfileReader::Run& run, double referenceHostNs);

/// Which program of the model \p run recorded: its script with the folder it is in
/// (examples/torch/train_gpt.py and examples/megatron/train_gpt.py are two programs, which
/// ProgramName calls both "train_gpt.py"), and the words among its arguments that are not
/// numbers.  Words choose the code that runs (`--model llama` or `--model resnet`, `--mode
/// fsdp`, `--optim sgd`, `--compile default`, `--channels-last`): the Python between two
/// CUDA calls is another program's.  Numbers size the same code (`--layers 4`, `--batch
/// 8`, `--steps 6`, a launcher's `--nproc_per_node 2`) and keep the program.
std::string ModelProgram(const ProfileReader::Run& run);

struct LearnOptions
{
    host_time::HostTimeModel::Options model;
    /// Programs told apart by their word arguments (ModelProgram); false: by script alone.
    bool byCodePath{true};
    /// Learn from each thread's steady steps only (host_time::SteadyFrom); false: all gaps.
    bool steadyOnly{true};
    /// The longest context (calls before a gap) the model learns: host_time::kDepth.
    int maxDepth{host_time::kDepth};
    /// What leaveOut names: ProgramName (false; every run of the script, whatever its
    /// arguments), or ModelProgram (true; one code path, the others of the script stay).
    bool leaveOutCodePaths{false};
};

struct LearnedHostModel
{
    host_time::GapTable table; ///< empty: nothing recorded to learn from
    std::size_t programs{0};
    std::size_t runs{0};
    std::size_t gaps{0};
};

/// The model of every program \p profile recorded host time of but those whose
/// ProgramName (or ModelProgram: LearnOptions::leaveOutCodePaths) is in \p leaveOut, each run
/// scaled to \p referenceHostNs (0: unscaled). Reads the runs' gaps from the file.
LearnedHostModel LearnHostModel(const ProfileReader& profile, const LearnOptions& options,
                                double referenceHostNs, const std::set<std::string>& leaveOut = {});
LearnedHostModel LearnHostModel(const ProfileReader& profile, host_time::GapStatistic statistic,
                                double referenceHostNs, const std::set<std::string>& leaveOut = {});

} // namespace phantora::profile
