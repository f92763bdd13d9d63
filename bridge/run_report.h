// What a run produced, for people (a table on stdout) and for tools (--report JSON).
#pragma once

#include "engine/simulation_engine.h"
#include "engine/simulation_error.h"
#include "error_band.h"

#include <filesystem>
#include <string>

namespace phantora
{

struct RunInfo
{
    std::string scenarioFile;
    std::string scenarioName;
    std::vector<std::string> command;
    double wallTimeS{0};
    bool ok{false};
    std::string failure;
    /// How the run ended; anything but Completed marks the report incomplete.
    RunEnd end{RunEnd::Error};
    /// The pricing sources' measured errors (empty: none read; the band says so).
    ErrorBandTable errorBands;
    std::string gpuModel;
};

void PrintSummary(const SimulationEngine& engine, const RunInfo& info);
void WriteJsonReport(const std::filesystem::path& file, const SimulationEngine& engine,
                     const RunInfo& info);

} // namespace phantora
