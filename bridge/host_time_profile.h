// What a simulation tells its ranks about host time (interposer/host_time.h): the recorded
// gaps of the simulated program, from the profile (gpu_profiler/host_gap_table.h), and how
// this machine's CPU time relates to the recording host's, for what must still be
// measured here.
#pragma once

#include "profile_reader.h"
#include "scenario.h"

#include <string>
#include <vector>

namespace phantora
{

struct HostTimeProfile
{
    /// The program's recorded gaps (host_time::GapTable, serialized); empty: none.
    std::string table;
    /// The recorded runs the table was built from.
    std::vector<std::string> runs;
    /// Whether those runs gave the program every argument the simulated command gives it
    /// (iteration counts aside: --steps, --warmup, ...; the runs most like the command win).
    bool sameArguments{false};
    /// The world size those runs were launched at (profile::LaunchedRanks).
    int recordedRanks{1};
    std::size_t gaps{0};
    std::size_t keys{0};
    /// This machine's CPU ns -> the recording host's.
    double localScale{1.0};
    /// Where localScale came from: "scenario", "measured" (both hosts' speeds), or "none"
    /// (no recording host speed in the profile: 1).
    std::string localScaleSource{"none"};
    double recordingHostNs{0}; ///< host_speed.h, per round; 0 if unknown
    double localHostNs{0};

    /// For \p command (the simulated program) on \p ranks ranks of \p scenario, whose
    /// profile is \p profile (nullptr: none).  Measures this machine's host speed when the profile
    /// knows the recording host's and the scenario does not give [cpu] local_scale.
    static HostTimeProfile Prepare(const profile::ProfileReader* profile,
                                   const std::vector<std::string>& command, int ranks,
                                   const CpuSpec& cpu);
};

} // namespace phantora
