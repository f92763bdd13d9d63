// `gpu_profiler leave-out`: a copy of a profile that holds no recording of some programs,
// so that a simulation of one of them is timed as a user's new program would be: from
// the samples other programs left and the estimates, with host time measured as for an
// unrecorded program (bench/accuracy, "Left out").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace phantora::profile
{

struct LeftOutRun
{
    std::string run;
    std::string program;
    int64_t samples{0};   ///< kernel samples removed
    int64_t gaps{0};      ///< host gaps removed
    int64_t readbacks{0}; ///< read-back values removed
};

struct LeaveOutResult
{
    std::vector<LeftOutRun> runs; ///< by program, then run name
    int64_t opsDropped{0};        ///< ops the left-out runs alone had measured
    int64_t opsRecomputed{0};     ///< ops that kept other runs' samples: statistics recomputed
    int64_t opsMedianChanged{0};  ///< of those, the ones whose median moved
    int64_t opsKept{0};           ///< ops in the copy
    int64_t labelsDropped{0};     ///< boundary labels no remaining host gap uses
};

/// Writes \p out: \p in without any run whose program (the runs table, program_name.h) is
/// one of \p programs: its kernel samples, host gaps, read-back values and runs row go;
/// each op that lost samples gets its statistics recomputed from those left, or goes when
/// none are.  Samples of runs the runs table does not name (profiles imported before it)
/// stay.  \p in is not changed; \p out is replaced, and written only when every program is
/// known.  Throws ProfileError naming the file: \p in missing or \p out the same file, a
/// program no run of \p in measured (listing the programs it holds), none given.
LeaveOutResult LeaveOut(const std::filesystem::path& in, const std::filesystem::path& out,
                        const std::vector<std::string>& programs);

} // namespace phantora::profile
