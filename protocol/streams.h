// Stream ids on the wire.  The interposer chooses stream handles, so it encodes in
// them what the bridge needs to know to order work the way CUDA does.
#pragma once

#include <cstdint>

namespace phantora::wire
{

/// The legacy default stream (stream 0, cudaStreamLegacy).
inline constexpr uint64_t kLegacyStream = 0;
/// Set in the id of a stream created with cudaStreamNonBlocking: it does not
/// synchronise with the legacy default stream.
inline constexpr uint64_t kNonBlockingBit = 0x8;
/// Created streams count up from here in steps of kStreamStep.
inline constexpr uint64_t kFirstStream = 0x1000;
inline constexpr uint64_t kStreamStep = 0x10;
/// Each thread's cudaStreamPerThread gets an id from here up (a blocking stream).
inline constexpr uint64_t kFirstPerThreadStream = uint64_t{1} << 48;

inline constexpr bool IsNonBlocking(uint64_t stream)
{
    return (stream & kNonBlockingBit) != 0;
}

} // namespace phantora::wire
