// The ids the interposer makes up: records on a stream's timeline, host-function holds,
// stream handles, physical memory chunks.  Each kind of id comes from a named space, a
// range of values of its own; spaces of ids that name the same kind of thing on the wire
// never overlap (checked at compile time below), so the bridge can tell a
// cudaEventRecord's record from a host function's, and from its own, by value alone.
// The values are those the bridge has always received.
#pragma once

#include "protocol/streams.h"

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string_view>

namespace phantora::interposer
{

/// What an id names.  Ids of different fields may be equal; ids of one field must not.
enum class IdField
{
    Record,        ///< a point on a stream's timeline (wire::EventRecord and the waits on it)
    HostFunction,  ///< a host function's hold on its stream (wire::HostFunction)
    Stream,        ///< a stream handle, which is also its id on the wire (protocol/streams.h)
    PhysicalChunk, ///< a CUmemGenericAllocationHandle (cuMemCreate); never on the wire
};

struct IdSpace
{
    std::string_view name;
    IdField field;
    uint64_t first;
    uint64_t end; ///< one past the last id
    uint64_t step;

    constexpr uint64_t Capacity() const { return end <= first ? 0 : (end - first - 1) / step + 1; }
    constexpr bool Contains(uint64_t id) const
    {
        return id >= first && id < end && (id - first) % step == 0;
    }
};

/// Whether two spaces could give the same id to the same kind of thing.
constexpr bool Overlap(const IdSpace& a, const IdSpace& b)
{
    return a.field == b.field && a.first < b.end && b.first < a.end;
}

namespace id_space
{

inline constexpr uint64_t kNone = UINT64_MAX; ///< end of a space that runs to the top

/// cudaEventRecord and cudaStreamQuery's tail records; 0 means "never recorded".
inline constexpr IdSpace kEventRecords{"event records", IdField::Record, 1, uint64_t{1} << 62, 1};
/// The point a host function waits for on its stream.
inline constexpr IdSpace kHostFunctionRecords{"host-function records", IdField::Record,
                                              uint64_t{1} << 62, uint64_t{1} << 63, 1};
/// Not the interposer's: the bridge's own records (a stream ordered after the legacy
/// stream, bridge/gpu_timeline.cc) take the top half.
inline constexpr IdSpace kBridgeRecords{"the bridge's implicit records", IdField::Record,
                                        uint64_t{1} << 63, kNone, 1};
inline constexpr IdSpace kHostFunctions{"host functions", IdField::HostFunction, 1, kNone, 1};
/// Not the interposer's: the handles CUDA defines (0, cudaStreamLegacy, cudaStreamPerThread).
inline constexpr IdSpace kRuntimeStreams{"the runtime's own stream handles", IdField::Stream, 0, 3,
                                         1};
/// cudaStreamCreate: distinct small-step values well away from the runtime's handles;
/// wire::kNonBlockingBit, below the step, is set in those created non-blocking.
inline constexpr IdSpace kStreams{"streams", IdField::Stream, wire::kFirstStream,
                                  wire::kFirstPerThreadStream, wire::kStreamStep};
/// Each thread's cudaStreamPerThread.
inline constexpr IdSpace kPerThreadStreams{"per-thread streams", IdField::Stream,
                                           wire::kFirstPerThreadStream, kNone, wire::kStreamStep};
inline constexpr IdSpace kPhysicalChunks{"physical memory chunks", IdField::PhysicalChunk, 1, kNone,
                                         1};

inline constexpr IdSpace kAll[] = {kEventRecords,     kHostFunctionRecords, kBridgeRecords,
                                   kHostFunctions,    kRuntimeStreams,      kStreams,
                                   kPerThreadStreams, kPhysicalChunks};

constexpr bool NoneOverlap()
{
    for (std::size_t i = 0; i < std::size(kAll); ++i)
    {
        for (std::size_t j = i + 1; j < std::size(kAll); ++j)
        {
            if (Overlap(kAll[i], kAll[j]))
            {
                return false;
            }
        }
    }
    return true;
}
static_assert(NoneOverlap(), "two id spaces of one field overlap");
static_assert(wire::kNonBlockingBit < wire::kStreamStep &&
                  wire::kFirstStream % wire::kStreamStep == 0,
              "a created stream's flag bit must stay inside its own id");

} // namespace id_space

/// Hands out the ids of one space in order, from any thread, each once.
class IdAllocator
{
public:
    constexpr explicit IdAllocator(const IdSpace& space) : m_space(space) {}
    IdAllocator(const IdAllocator&) = delete;
    IdAllocator& operator=(const IdAllocator&) = delete;

    /// The next id; throws std::length_error naming the space when it has none left.
    uint64_t Next();

    const IdSpace& Space() const { return m_space; }

private:
    IdSpace m_space;
    std::atomic<uint64_t> m_taken{0};
};

/// The interposer's ids, one allocator per space.  Constant-initialised and trivially
/// destructible, so usable from a hook at any time (never_destroyed.h says why it matters).
enum class IdKind
{
    EventRecord,
    HostFunctionRecord,
    HostFunction,
    Stream,
    PerThreadStream,
    PhysicalChunk,
};

constexpr const IdSpace& SpaceOf(IdKind kind)
{
    switch (kind)
    {
    case IdKind::EventRecord:
        return id_space::kEventRecords;
    case IdKind::HostFunctionRecord:
        return id_space::kHostFunctionRecords;
    case IdKind::HostFunction:
        return id_space::kHostFunctions;
    case IdKind::Stream:
        return id_space::kStreams;
    case IdKind::PerThreadStream:
        return id_space::kPerThreadStreams;
    case IdKind::PhysicalChunk:
        return id_space::kPhysicalChunks;
    }
    throw std::invalid_argument("no such id kind");
}

/// A new id of \p kind, never handed out before in this process.
uint64_t NewId(IdKind kind);

} // namespace phantora::interposer
