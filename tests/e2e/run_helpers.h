// Running phantora-cluster from a test: scenarios written to a scratch folder,
// output captured, step times read back from the example program's own lines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace phantora::test
{

struct CommandResult
{
    int exitCode{-1};
    std::string output; ///< stdout and stderr together
};

/// Runs \p command through /bin/sh, capturing its output.
CommandResult RunCommand(const std::string& command);

/// A fresh folder for this test's files.
std::filesystem::path ScratchDir();

/// Writes \p text to \p name in the scratch folder.
std::filesystem::path WriteFile(const std::string& name, const std::string& text);

/// A minimal scenario: \p gpus H200s on one switch (400 Gb/s, 1 us links), 1 us kernels
/// unless \p extra (more TOML tables) says otherwise.
std::string SwitchScenario(int gpus, const std::string& extra = "");

/// One \p model GPU timed by \p profile alone: no host time (`time_scale = 0`), and a
/// 1 s `[kernels] default` that no measured op can be mistaken for.
std::string ProfileOnlyScenario(const std::string& model, const std::filesystem::path& profile);

/// One H200 whose host time comes from \p profile: `[cpu] host_time = "<hostTime>"` at
/// `time_scale` 1, `[kernels] default = "<kernelDefault>"`, and \p extra (more TOML tables)
/// appended.
std::string HostTimeScenario(const std::filesystem::path& profile, const std::string& hostTime,
                             const std::string& kernelDefault, const std::string& extra = "");

/// Pids of live processes whose environment holds every one of \p needles ("NAME=VALUE").
std::vector<int> ProcessesWithEnvironment(const std::vector<std::string>& needles);

/// "[rank R] rank R step S time X us" lines: (rank, step) -> nanoseconds.
std::map<std::pair<int, int>, int64_t> StepTimesNs(const std::string& output);

} // namespace phantora::test
