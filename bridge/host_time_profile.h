// What a simulation tells its ranks about host time (interposer/host_time.h): the recorded
// gaps of the simulated program, from the profile (host_time/host_gap_table.h), and how
// this machine's CPU time relates to the recording host's, for what must still be
// measured here.
#pragma once

#include "gpu_model/profile/profile_reader.h"
#include "host_time/host_gap_table.h"
#include "host_time/readback_table.h"
#include "scenario.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace phantora
{

/// Where a run's host time comes from (the summary's first words on it).
enum class HostTimeOrigin : uint8_t
{
    Recording, ///< the simulated program's own recordings
    Model,     ///< the model of every recorded program (host_time/host_time_model.h)
    Measured,  ///< this machine's CPU time, scaled: [cpu] host_time = "measured", or nothing
               ///< recorded to learn from
};

struct HostTimeProfile
{
    HostTimeOrigin origin{HostTimeOrigin::Measured};
    /// The gaps the ranks charge (host_time::GapTable, serialized): the program's recording
    /// or the model; empty: measure.
    std::string table;
    /// What the model learned from (origin Model): programs and runs, and the file.
    std::size_t modelPrograms{0};
    std::size_t modelRuns{0};
    std::string modelFile;
    /// origin Measured because the scenario asked for it ([cpu] host_time = "measured").
    bool measuredByChoice{false};
    /// The recorded read-back values the ranks return (host_time::ReadbackTable filtered
    /// by [workload] readback, serialized); empty: none.
    std::string readbacks;
    host_time::ReadbackMode readbackMode{host_time::ReadbackMode::Float};
    std::size_t recordedReads{0}; ///< reads in the recording
    std::size_t readbackKeys{0};  ///< keys served (after the filter)
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
    /// profile is \p profile (nullptr: none; then [cpu] host_model's file, if named, is
    /// read for the model).  The program's recordings where the profile holds some and
    /// [cpu] host_time allows, else the host-time model of every recorded program, else
    /// (nothing recorded, or "measured") this machine's CPU time.  Measures this machine's
    /// host speed when the profile knows the recording host's and the scenario does not
    /// give [cpu] local_scale.
    /// Host time the ranks were charged, per host_time::Source.
    struct Charged
    {
        std::array<int64_t, host_time::kSources> ns{};
        std::array<uint64_t, host_time::kSources> gaps{};
        /// Small device-to-host reads the value shadow knew nothing of: served from the
        /// recording, and read as zeros (no recorded value, or the filter's).
        uint64_t readbacksServed{0};
        uint64_t readbacksZeros{0};
    };
    /// The summary's account of \p charged, one line (unwrapped): how many gaps came from
    /// the recording, by which key, and what was measured here.  Shares are of *gaps*:
    /// by time, one start-up gap measured here (a framework's set-up between its first
    /// GPU calls and its first step, seconds long) outweighs every step's recorded gaps,
    /// and a line in shares of time reads as if the steps were not found in the recording.
    std::string Describe(const Charged& charged) const;
    /// The summary's line on recorded read-back values: how many reads they served.
    std::string DescribeReadbacks(const Charged& charged) const;

    static HostTimeProfile
    Prepare(const profile::ProfileReader* profile, const std::vector<std::string>& command,
            int ranks, const CpuSpec& cpu,
            host_time::ReadbackMode readback = host_time::ReadbackMode::Float);

private:
    /// Where localScale came from, for Describe: " (host speed: ...)" or "".
    std::string ScaleOrigin() const;
    /// Sets table (and origin, modelPrograms, modelRuns) to the model of every program
    /// \p profile recorded, each run scaled to \p referenceHostNs (0: unscaled).
    void LearnModel(const profile::ProfileReader& profile, const CpuSpec& cpu,
                    double referenceHostNs);
    /// How the charged gaps split by key, for Describe: " (80.1% context, ...)".
    static std::string BySource(const Charged& charged);
};

} // namespace phantora
