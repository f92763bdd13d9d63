// Messages between a rank's interposer and the bridge.  Every request carries the
// rank's simulated CPU clock at the call, so the bridge knows how far each rank
// has got without asking.  Asynchronous work (kernel launches, async copies,
// collectives) is fire-and-forget; calls that wait get a reply with the same seq.
#pragma once

#include <array>
#include <cereal/cereal.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>

namespace phantora::wire
{

inline constexpr uint32_t kMagic = 0x544e4850; // "PHNT"
inline constexpr uint16_t kVersion = 1;
inline constexpr std::size_t kNcclIdBytes = 128;
/// Longest string a message may carry.  Kernel names of heavily templated
/// libraries run to a few KiB; the bound keeps a corrupt length prefix from
/// making the decoder allocate gigabytes.
inline constexpr uint32_t kMaxStringBytes = 64 * 1024;

class StringTooLong : public std::length_error
{
public:
    using std::length_error::length_error;
};

/// Serialises a string with a 32-bit length checked against kMaxStringBytes.
struct BoundedString
{
    std::string& value;

    template <class A> void save(A& ar) const
    {
        if (value.size() > kMaxStringBytes)
        {
            throw StringTooLong("string of " + std::to_string(value.size()) +
                                " bytes in a message");
        }
        ar(static_cast<uint32_t>(value.size()));
        ar(cereal::binary_data(value.data(), value.size()));
    }

    template <class A> void load(A& ar)
    {
        uint32_t n = 0;
        ar(n);
        if (n > kMaxStringBytes)
        {
            throw StringTooLong("string of " + std::to_string(n) + " bytes in a message");
        }
        value.resize(n);
        ar(cereal::binary_data(value.data(), n));
    }
};

using NcclId = std::array<uint8_t, kNcclIdBytes>;

// ---- rank -> bridge ----

struct Hello
{
    std::string token;
    int32_t rank{0};
    int32_t worldSize{0};
    int32_t localRank{0};
    int32_t pid{0};
    template <class A> void serialize(A& ar)
    {
        ar(BoundedString{token}, rank, worldSize, localRank, pid);
    }
};

struct KernelLaunch
{
    uint64_t stream{0};
    std::string name;
    std::array<uint32_t, 3> grid{};
    std::array<uint32_t, 3> block{};
    uint32_t sharedMem{0};
    template <class A> void serialize(A& ar)
    {
        ar(stream, BoundedString{name}, grid, block, sharedMem);
    }
};

enum class CopyKind : uint8_t
{
    HostToHost = 0,
    HostToDevice = 1,
    DeviceToHost = 2,
    DeviceToDevice = 3,
    Memset = 4,
};

struct Memcpy
{
    uint64_t stream{0};
    CopyKind kind{CopyKind::HostToDevice};
    uint64_t bytes{0};
    bool blocking{false}; ///< true: the call returns only when the copy is done (a reply follows)
    template <class A> void serialize(A& ar) { ar(stream, kind, bytes, blocking); }
};

struct Synchronize
{
    bool wholeDevice{false}; ///< cudaDeviceSynchronize; otherwise the one stream
    uint64_t stream{0};
    template <class A> void serialize(A& ar) { ar(wholeDevice, stream); }
};

struct NcclCommInit
{
    NcclId id{};
    int32_t nranks{0};
    int32_t rank{0};
    template <class A> void serialize(A& ar) { ar(id, nranks, rank); }
};

enum class CollectiveOp : uint8_t
{
    AllReduce = 0,
    AllGather = 1,     ///< bytes: the whole output buffer
    ReduceScatter = 2, ///< bytes: the whole input buffer
    Broadcast = 3,
    Reduce = 4,
    AllToAll = 5, ///< bytes: one rank's whole send buffer
};

struct NcclCollective
{
    uint64_t comm{0};
    CollectiveOp op{CollectiveOp::AllReduce};
    uint64_t bytes{0};
    uint64_t stream{0};
    int32_t root{0}; ///< broadcast and reduce
    template <class A> void serialize(A& ar) { ar(comm, op, bytes, stream, root); }
};

/// ncclCommSplit: every member of \p parent calls it; members with the same color
/// form a new communicator, ranked by key (then by parent rank).
struct NcclCommSplit
{
    uint64_t parent{0};
    int32_t color{0}; ///< NCCL_SPLIT_NOCOLOR (-1): this rank joins no new communicator
    int32_t key{0};
    template <class A> void serialize(A& ar) { ar(parent, color, key); }
};

struct NcclCommDestroy
{
    uint64_t comm{0};
    template <class A> void serialize(A& ar) { ar(comm); }
};

/// cudaEventRecord: \p record identifies this one recording (an event recorded again
/// is a new record; waits refer to the record current when they were issued).
struct EventRecord
{
    uint64_t stream{0};
    uint64_t record{0};
    template <class A> void serialize(A& ar) { ar(stream, record); }
};

/// cudaStreamWaitEvent: later work on \p stream starts after \p record.
struct StreamWaitEvent
{
    uint64_t stream{0};
    uint64_t record{0};
    template <class A> void serialize(A& ar) { ar(stream, record); }
};

/// cudaEventSynchronize (query = false: returns when the record is done) or
/// cudaEventQuery (query = true: answers whether it is done at the caller's clock).
struct EventWait
{
    uint64_t record{0};
    bool query{false};
    template <class A> void serialize(A& ar) { ar(record, query); }
};

/// cudaEventElapsedTime between two records.
struct EventElapsed
{
    uint64_t start{0};
    uint64_t end{0};
    template <class A> void serialize(A& ar) { ar(start, end); }
};

struct Goodbye
{
    uint64_t peakDeviceBytes{0};
    template <class A> void serialize(A& ar) { ar(peakDeviceBytes); }
};

using Request = std::variant<Hello, KernelLaunch, Memcpy, Synchronize, NcclCommInit, NcclCollective,
                             NcclCommDestroy, Goodbye, EventRecord, StreamWaitEvent, EventWait,
                             EventElapsed, NcclCommSplit>;

struct RequestEnvelope
{
    uint64_t seq{0};
    int64_t clockNs{0}; ///< the rank's simulated CPU clock when it made the call
    Request body;
};

// ---- bridge -> rank ----

/// What the rank needs to answer device queries and run its clock.
struct Welcome
{
    std::string gpuName;
    uint64_t gpuMemoryBytes{0};
    int32_t deviceCount{1};
    int32_t localDevice{0};
    int32_t smCount{0};
    int32_t ccMajor{0};
    int32_t ccMinor{0};
    double cpuTimeScale{1.0};
    int64_t callOverheadNs{0};
    template <class A> void serialize(A& ar)
    {
        ar(BoundedString{gpuName}, gpuMemoryBytes, deviceCount, localDevice, smCount, ccMajor,
           ccMinor, cpuTimeScale, callOverheadNs);
    }
};

/// The simulated instant at which a waiting call returns.
struct Resume
{
    int64_t clockNs{0};
    template <class A> void serialize(A& ar) { ar(clockNs); }
};

struct CommReady
{
    uint64_t comm{0}; ///< 0: no communicator (a split with NCCL_SPLIT_NOCOLOR)
    int64_t clockNs{0};
    int32_t nranks{0};
    int32_t rank{0};
    template <class A> void serialize(A& ar) { ar(comm, clockNs, nranks, rank); }
};

/// Whether a queried record is done at the caller's clock (which does not move).
struct QueryAnswer
{
    bool ready{false};
    template <class A> void serialize(A& ar) { ar(ready); }
};

/// Simulated nanoseconds between two records, and whether both are done at the
/// caller's clock (if not, CUDA answers cudaErrorNotReady).
struct Elapsed
{
    int64_t ns{0};
    bool ready{false};
    template <class A> void serialize(A& ar) { ar(ns, ready); }
};

struct Failure
{
    std::string message;
    template <class A> void serialize(A& ar) { ar(BoundedString{message}); }
};

using Reply = std::variant<Welcome, Resume, CommReady, Failure, QueryAnswer, Elapsed>;

struct ReplyEnvelope
{
    uint64_t seq{0};
    Reply body;
};

const char* RequestName(const Request& r);

} // namespace phantora::wire
