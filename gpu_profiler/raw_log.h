// The recorder's output, one line per GPU op, tab-separated (kept in profiles/raw/
// beside the databases, so every number in a profile can be traced to a run):
//   meta  KEY  VALUE
//   op    KIND NAME GRID_X GRID_Y GRID_Z BLOCK_X BLOCK_Y BLOCK_Z SHARED_MEM BYTES DURATION_NS
#pragma once

#include "op_key.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace phantora::profile
{

struct RawLog
{
    std::map<std::string, std::string> metadata;
    std::map<OpKey, std::vector<int64_t>> samples;

    /// Throws ProfileError naming the file and line of anything malformed.
    static RawLog Read(const std::filesystem::path& file);
};

} // namespace phantora::profile
