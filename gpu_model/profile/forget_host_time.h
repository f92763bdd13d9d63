// `gpu_profiler forget-host-time`: removes runs' host time from a profile, so that the
// simulation's gap medians come from the program's other recordings only (the GPU
// machine's CPU speed drifts within minutes: a program's host time is re-recorded in turns
// with its real runs, and the older recordings must leave, profiles/README.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace phantora::profile
{

struct ForgottenRun
{
    std::string run;
    int64_t gaps{0};      ///< host_gaps rows removed
    int64_t readbacks{0}; ///< host_readbacks rows removed
};

struct ForgetHostTimeResult
{
    std::vector<ForgottenRun> runs; ///< in run-name order
    int64_t labelsDropped{0};       ///< host_labels no remaining gap refers to
};

/// Forgets the host time of \p runs (names as in the runs table: the raw log's file name)
/// and of every run holding host time whose name matches one of \p likePatterns (SQL LIKE:
/// '%' any text, '_' one character, ASCII case ignored).  Each run keeps its kernel samples
/// and its runs row (ProfileWriter::ForgetHostTime).  One transaction: nothing changes
/// unless every name and pattern is valid; \p dryRun changes nothing at all.  Throws
/// ProfileError naming the file and the bad name or pattern (not in the profile, or holding
/// no host time) and listing the runs that hold host time; and for a missing file.
ForgetHostTimeResult ForgetHostTime(const std::filesystem::path& db,
                                    const std::vector<std::string>& runs,
                                    const std::vector<std::string>& likePatterns, bool dryRun);

} // namespace phantora::profile
