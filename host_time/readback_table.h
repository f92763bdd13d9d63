// Recorded read-back values: the bytes small device-to-host copies returned on the real GPU,
// for the simulation to return in their place (interposer/host_time.h).
//
// Kernels compute nothing in simulation, so every value a program reads back from the GPU
// is zero unless the value shadow knows it (interposer/value_shadow.h: bytes the program
// wrote itself, moved, or gathered).  A program that steers by a kernel's output then takes
// a path the real run does not: Megatron's gradient clipping reads the gradient norm
// (`total_norm.item()`), sees 0 and skips the 105 calls of its `grad * coeff` branch that
// the real run makes every step (examples/megatron/README.md).  The host-time pass of
// `gpu_profiler record` keeps the bytes of every device-to-host copy of at most
// kMaxReadbackBytes (recorder_host_gaps.h), at its place in the thread's sequence of
// boundary calls; this table keys them as host gaps are keyed (host_gap_table.h): by the
// thread's last boundaries *including the copy itself*, with and without sites, and by the
// copy's size.
//
// What a key returns (Representative):
//   * float-looking reads (every element of every sample a finite float of the same width,
//     0 or of magnitude 2^-100..2^100: FloatLike): the element-wise (lower) median of the
//     samples, a value some recorded read had, robust to one odd step (the first's);
//   * others (flags, counts, sizes): the most frequent bytes, ties to the latest recorded.
// A shorter key covering reads of several longest keys is kept only where all of those
// longest keys give the same value, so a fallback never returns another read's value.
//
// Where it goes wrong: a recording is made at one world size and with the real data; a read
// whose value depends on either (token counts, split sizes, a nonzero count, anything
// summed over ranks) returns the recording's.  Integers are where these live, so the default
// ([workload] readback = "float") serves float-looking reads only; "all" serves every one.
#pragma once

#include "host_gap_table.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace phantora::host_time
{

/// The largest read whose bytes are recorded and served: a scalar or a few (a norm, a
/// loss, a flag, a handful of counts) is what a program branches on; 64 bytes is eight
/// doubles.  Larger reads are data (a tensor printed, copied to the CPU), which a program
/// rarely branches on and whose recording would grow with the model.
inline constexpr std::size_t kMaxReadbackBytes = 64;

/// Which recorded read-backs a simulation serves ([workload] readback).
enum class ReadbackMode : uint8_t
{
    Zeros, ///< none: every read the value shadow does not know is zeros, as before
    Float, ///< float-looking reads only (the default)
    All,   ///< every recorded read
};

class ReadbackTable
{
public:
    struct Entry
    {
        std::string bytes;     ///< what the read returns
        bool floatLike{false}; ///< every sample looked like floating-point numbers
        bool stable{false};    ///< every sample had the same bytes
        uint32_t samples{0};
    };

    /// From the recorded threads' sequences and their reads (Sequence::reads).  Throws
    /// std::invalid_argument for a read at a position past the sequence's end.
    static ReadbackTable Build(const std::vector<Sequence>& threads);

    /// The entries \p mode serves.
    ReadbackTable Filtered(ReadbackMode mode) const;

    /// The value for a read of \p size bytes made by the boundary call that \p context ends
    /// with (the copy pushed last); nullptr if none was recorded.
    const Entry* Lookup(const Context& context, std::size_t size) const;

    bool Empty() const { return m_entries.empty(); }
    std::size_t Keys() const { return m_entries.size(); }
    /// How many recorded reads the table was built from.
    std::size_t Reads() const { return m_reads; }

    /// A compact, deterministic encoding (sorted by key) for the wire; "" when empty.
    std::string Serialize() const;
    /// Throws std::invalid_argument on bytes Serialize did not write.
    static ReadbackTable Parse(std::string_view bytes);

    /// Whether \p bytes look like floating-point numbers of one width (8, 4 or 2 bytes,
    /// tried in that order): each element zero, or finite, normal and of magnitude
    /// 2^-100..2^100.  Small integers fail (their bits are subnormal or tiny floats).
    /// Returns the element width, 0 if none fits.
    static std::size_t FloatWidth(std::string_view bytes);

private:
    std::unordered_map<uint64_t, Entry> m_entries;
    std::size_t m_reads{0};
};

} // namespace phantora::host_time
