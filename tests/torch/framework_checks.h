// What the framework tests (Megatron, DeepSpeed, TorchTitan) check alike: the run's
// --report JSON, rank 0's step times, that those are positive and steady, and the fork
// server's account of its imports.
#pragma once

#include "../e2e/run_helpers.h"

#include <cstddef>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

namespace phantora::test
{

/// A scenario file extending \p base with CPU work free ([cpu] time_scale = 0): a step is
/// then its GPU and network time.  Host time a profile does not hold (these programs'
/// multi-rank paths) would otherwise be this machine's CPU time, which a loaded CI machine
/// makes vary by tens of percent from step to step.
inline std::string CpuFreeScenario(const std::string& base)
{
    return WriteFile("scenario.toml",
                     fmt::format("extends = \"{}\"\n[cpu]\ntime_scale = 0\n", base))
        .string();
}

inline nlohmann::json ReadJson(const std::string& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

/// Rank 0's "step N: X ms" lines (the examples' own step log).
inline std::vector<double> StepMs(const std::string& output)
{
    const std::regex line(R"(\[rank 0\] step (\d+): ([0-9.]+) ms, )");
    std::vector<double> ms;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
         it != std::sregex_iterator(); ++it)
    {
        ms.push_back(std::stod((*it)[2]));
    }
    return ms;
}

/// Between \p minSteps and \p maxSteps steps, each took simulated time, and the steps
/// after the first (warm-up: compilations, the allocator's growth) agree within
/// \p spread of their mean: the run is in a steady state.
inline void ExpectPositiveAndSteady(const std::vector<double>& ms, double spread,
                                    std::size_t minSteps,
                                    std::size_t maxSteps = std::numeric_limits<std::size_t>::max())
{
    ASSERT_GE(ms.size(), minSteps);
    ASSERT_LE(ms.size(), maxSteps);
    for (double m : ms)
    {
        EXPECT_GT(m, 0.0);
    }
    const std::vector<double> steady(ms.begin() + 1, ms.end());
    double mean = 0;
    for (double m : steady)
    {
        mean += m / static_cast<double>(steady.size());
    }
    for (double m : steady)
    {
        EXPECT_NEAR(m, mean, spread * mean)
            << "steps after the first differ by more than " << spread * 100 << " % of their mean";
    }
}

/// The fork server's line in \p output says it imported torch and the program's own
/// imports before forking the ranks (--fork-server with the default preload).
inline void ExpectTheForkServerPreloadedTheProgramsImports(const std::string& output)
{
    EXPECT_TRUE(std::regex_search(
        output,
        std::regex(
            R"(\[fork server\] imported torch, torch._dynamo, the program's \d+ imports \()")))
        << output;
}

} // namespace phantora::test
