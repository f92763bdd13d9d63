// What a host-time profile calls a *boundary*: one of the program's calls that puts work
// on the GPU, waits for it, or orders it (a launch, a GEMM, a copy, an event, a
// synchronisation, an NCCL call).  The host time a thread spends between two boundaries
// is what the recorder measures on the real machine and what the simulation charges
// (host_gap_table.h); the boundary's label says which call it was and where from.
//
// A label is "<what>@<site>":
//   what  "<kind>:<detail>": launch:<kernel name>, gemm:<API>, copy:sync|async, memset,
//         event:record|wait|query|sync|elapsed, sync:stream|device, nccl:<op>, hostfn,
//         comm:init|split|destroy (host_boundary.h lists them);
//   site  the first return address outside the recorder or interposer, as the module's
//         file name and the offset in it ("libtorch_cuda.so+0x3a127c1").  The site tells
//         apart calls that look alike (an event recorded by the caching allocator, by
//         ProcessGroupNCCL, or from Python) and does not depend on where the module was
//         loaded.  Offsets only mean something for the same build of the module, so
//         lookups fall back to the module alone, then to no site (HostLabel's hashes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace phantora::host_time
{

/// 64-bit FNV-1a: the same on every machine and build (std::hash is neither).
uint64_t Fnv1a(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ull);

/// Mixes \p value into \p seed (order matters).
uint64_t Combine(uint64_t seed, uint64_t value);

struct HostLabel
{
    std::string text;  ///< what@site, as stored in the profile
    uint64_t full{0};  ///< hash of what@site
    uint64_t module{0}; ///< hash of what@module (the site without its offset)
    uint64_t bare{0};  ///< hash of what
    uint64_t kind{0};  ///< hash of the kind (what up to its first ':')

    /// From the stored text.
    static HostLabel FromText(std::string_view text);
    /// From the call's description and its site.
    static HostLabel Make(std::string_view what, std::string_view site);
};

} // namespace phantora::host_time
