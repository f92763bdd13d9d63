// A scenario may build on others: `extends = "other.toml"` (or a list, applied in order)
// at the top of a file takes every table of the named files and lays this file's over
// them. Tables merge key by key, a key written here replaces the same key there, and a
// [topology] whose `kind` differs replaces the whole table (a cluster keeps none of a
// node's keys). Paths are relative to the file that names them; a file that extends
// itself, directly or through others, is refused naming the chain.
#pragma once

#include <filesystem>
#include <toml++/toml.h>

namespace phantora
{

/// The TOML of \p file with everything it extends merged in. Each value keeps the file
/// and line it was written at (node.source().path), so errors name the right file.
/// Throws ScenarioError (scenario.h) naming file and line.
toml::table ComposeScenarioToml(const std::filesystem::path& file);

} // namespace phantora
