// The recorder's output, one line per GPU op, tab-separated (kept in data/raw/profiles/,
// so every number in a profile can be traced to a run):
//   meta  KEY  VALUE
//   op    KIND NAME GRID_X GRID_Y GRID_Z BLOCK_X BLOCK_Y BLOCK_Z SHARED_MEM BYTES DURATION_NS
//   [ARGS]
//   gap   THREAD GAP_NS LABEL [CALL_NS]
//   readback THREAD SEQ HEX
// ARGS (kernels; kernel_params.h ArgFacts) is absent in logs recorded before it existed.
// A gap line is one boundary call of a program thread (host_label.h LABEL) and the host
// time the thread spent since its previous one (-1 for its first), in call order per
// THREAD ("pid.tid"), and the thread CPU time of the call itself (-1: not kept, a call
// that waits); "meta host_speed_ns" is the recording host's speed (host_speed.h).
// A readback line is the bytes (HEX, two digits a byte) that a small device-to-host copy
// read on the GPU, made by the SEQ-th (from 0) boundary call of THREAD (readback_table.h).
#pragma once

#include "host_time/host_gap_table.h"
#include "op_key.h"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace phantora::profile
{

/// The most text a raw log may hold (decompressed), which RawLog::Read keeps in memory: about
/// 90 times the largest committed (48 MB, the zoo's Qwen2 recording on the H200).
inline constexpr std::size_t kMaxRawLogBytes = std::size_t{4} << 30;

struct RawLog
{
    std::map<std::string, std::string> metadata;
    std::map<OpKey, std::vector<int64_t>> samples;
    /// Each sample's launch arguments (ArgFacts), in the order of samples[key]; "" where
    /// the recorder did not know the kernel's parameters.
    std::map<OpKey, std::vector<std::string>> sampleArgs;
    /// The host-time profile's sequences, by thread (empty in older logs).
    std::map<std::string, host_time::Sequence> hostThreads;

    /// Throws ProfileError naming the file and line of anything malformed.  A file named
    /// "*.zst" is read through zstd (how data/raw/profiles keeps the large ones).
    static RawLog Read(const std::filesystem::path& file);
};

/// What each recording process of one `gpu_profiler record` wrote: "<raw>.<pid>.part"
/// beside \p raw, in pid order.  A launcher (torchrun, mpirun) and its workers all run
/// under the recorder; one shared file would keep only the last process to exit.
std::vector<std::filesystem::path> RawParts(const std::filesystem::path& raw);

/// Writes \p raw from \p parts: their op lines as they are, each metadata key once (the
/// first part's value; dropped_records summed) and "meta processes N".  Throws
/// ProfileError naming a part that is malformed or unreadable.
void JoinRawParts(const std::vector<std::filesystem::path>& parts,
                  const std::filesystem::path& raw);

/// Appends to \p out what the host-time pass's log \p in holds for the profile: its gap
/// and readback lines (its own metadata stays behind).  Returns the lines copied.
std::size_t AppendHostPass(std::istream& in, std::ostream& out);

} // namespace phantora::profile
