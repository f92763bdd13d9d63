// Reads a scenario file (TOML) strictly: every table and key is known, every value in
// range, or the file is refused naming the line, the key and what was expected.
#pragma once

#include "scenario.h"

#include <filesystem>

namespace phantora
{

/// Reads and validates \p file; throws ScenarioError.
Scenario LoadScenario(const std::filesystem::path& file);

} // namespace phantora
