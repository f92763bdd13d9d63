// Messages between a rank's interposer and the bridge.  Every request carries the
// simulated clock of the calling thread ("lane") at the call, so the bridge knows
// how far each thread has got without asking.  Asynchronous work (kernel launches,
// async copies, collectives) is fire-and-forget; calls that wait get a reply with
// the same seq, sent to the lane that asked.  Each lane has its own socket, so
// requests also carry a per-rank order number: the bridge handles a rank's requests
// in that order, which is the order in which the rank's threads made them.
#pragma once

#include "nccl/collective_kind.h"
#include "nccl/environment.h"

#include <array>
#include <cereal/cereal.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace phantora::wire
{

inline constexpr uint32_t kMagic = 0x544e4850; // "PHNT"
inline constexpr uint16_t kVersion = 12;
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
    uint32_t max{kMaxStringBytes};

    template <class A> void save(A& ar) const
    {
        if (value.size() > max)
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
        if (n > max)
        {
            throw StringTooLong("string of " + std::to_string(n) + " bytes in a message");
        }
        value.resize(n);
        ar(cereal::binary_data(value.data(), n));
    }
};

/// Most bytes of a host-time table (one Welcome per rank carries it).
inline constexpr uint32_t kMaxHostTableBytes = 256u << 20;

/// Most bytes of device data a message may carry (a small buffer's real contents,
/// see NcclCollective::values); bigger buffers travel as sizes only.
inline constexpr uint32_t kMaxValueBytes = 64 * 1024;

/// Most point-to-point operations one grouped NCCL call may carry.
inline constexpr uint32_t kMaxP2POps = 1 << 16;

class VectorTooLong : public std::length_error
{
public:
    using std::length_error::length_error;
};

/// Serialises a vector with a 32-bit length checked against \p Max, so a corrupt
/// length prefix cannot make the decoder allocate without bound.
template <class T, uint32_t Max> struct BoundedVector
{
    std::vector<T>& value;

    template <class A> void save(A& ar) const
    {
        if (value.size() > Max)
        {
            throw VectorTooLong("vector of " + std::to_string(value.size()) +
                                " entries in a message");
        }
        ar(static_cast<uint32_t>(value.size()));
        for (const T& v : value)
        {
            ar(v);
        }
    }

    template <class A> void load(A& ar)
    {
        uint32_t n = 0;
        ar(n);
        if (n > Max)
        {
            throw VectorTooLong("vector of " + std::to_string(n) + " entries in a message");
        }
        value.resize(n);
        for (T& v : value)
        {
            ar(v);
        }
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
    /// The phantora-rank that started this rank (its Watch::id, from PHANTORA_SUPERVISOR);
    /// empty for ranks that phantora-cluster launched itself.
    std::string supervisor;
    /// CUDA_DEVICE_MAX_CONNECTIONS as the rank's thread saw it at its first CUDA call, where
    /// CUDA reads it: the GPU's hardware queues for the process's streams; 0: unset.
    int32_t hardwareQueues{0};
    /// The command phantora-rank started (PHANTORA_COMMAND: its words separated by '\n'),
    /// for a bridge that serves ranks and so was not given it: which program's recording
    /// prices the host time.  Empty for ranks that phantora-cluster launched itself.
    std::string command;
    template <class A> void serialize(A& ar)
    {
        ar(BoundedString{token}, rank, worldSize, localRank, pid, BoundedString{supervisor},
           hardwareQueues, BoundedString{command});
    }
};

struct KernelLaunch
{
    uint64_t stream{0};
    std::string name;
    std::array<uint32_t, 3> grid{};
    std::array<uint32_t, 3> block{};
    uint32_t sharedMem{0};
    std::string args; ///< kernel_args::ArgFacts of the launch; empty if the layout is unknown
    /// kernel_work.h WorkFacts: what its struct arguments say of its work (estimates only)
    std::string work;
    template <class A> void serialize(A& ar)
    {
        ar(stream, BoundedString{name}, grid, block, sharedMem, BoundedString{args},
           BoundedString{work});
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
    /// A host copy whose host memory the program pinned (cudaHostAlloc, cudaHostRegister)
    bool pinnedHost{false};
    template <class A> void serialize(A& ar) { ar(stream, kind, bytes, blocking, pinnedHost); }
};

struct Synchronize
{
    bool wholeDevice{false}; ///< cudaDeviceSynchronize; otherwise the one stream
    uint64_t stream{0};
    template <class A> void serialize(A& ar) { ar(wholeDevice, stream); }
};

} // namespace phantora::wire

namespace phantora::nccl
{
/// A communicator creation call carries NCCL's tuning variables as the rank's process had
/// them (NCCL reads them there): the NCCL model's own type, sent as it is and parsed by
/// the bridge (nccl/environment.h).
template <class A> void serialize(A& ar, Environment& env)
{
    using wire::BoundedString;
    ar(BoundedString{env.algo}, BoundedString{env.proto}, BoundedString{env.minChannels},
       BoundedString{env.maxChannels}, BoundedString{env.nvlsEnable});
}
} // namespace phantora::nccl

namespace phantora::wire
{

struct NcclCommInit
{
    NcclId id{};
    int32_t nranks{0};
    int32_t rank{0};
    nccl::Environment tuning{}; ///< the rank's NCCL_* variables (and ncclConfig_t's CTA bounds)
    template <class A> void serialize(A& ar) { ar(id, nranks, rank, tuning); }
};

/// The collective a rank calls: the NCCL model's own kind, so the bridge plans what
/// the rank named without translating it.  One byte on the wire, numbered as before.
using CollectiveOp = nccl::CollectiveKind;

/// NCCL's data types and reduction operations, numbered as in nccl.h.
enum class DataType : uint8_t
{
    Int8 = 0,
    Uint8 = 1,
    Int32 = 2,
    Uint32 = 3,
    Int64 = 4,
    Uint64 = 5,
    Float16 = 6,
    Float32 = 7,
    Float64 = 8,
    Bfloat16 = 9,
    Float8e4m3 = 10,
    Float8e5m2 = 11,
};

enum class RedOp : uint8_t
{
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
    Avg = 4,
};

struct NcclCollective
{
    uint64_t comm{0};
    CollectiveOp op{CollectiveOp::AllReduce};
    uint64_t bytes{0};
    uint64_t stream{0};
    int32_t root{0}; ///< broadcast and reduce
    DataType dataType{DataType::Uint8};
    RedOp redOp{RedOp::Sum};
    /// The send buffer's real bytes when the rank knows them all and they are small
    /// (at most kMaxValueBytes); empty otherwise.  When every member sent them, the
    /// bridge computes each member's result (see CollectiveValues).
    bool hasValues{false};
    std::string values;
    template <class A> void serialize(A& ar)
    {
        ar(comm, op, bytes, stream, root, dataType, redOp, hasValues,
           BoundedString{values, kMaxValueBytes});
    }
};

/// Asks for the result (the receive buffer's bytes) of the calling rank's
/// \p sequence-th collective (from 0) on \p comm, one it sent values for.  The
/// answer (CollectiveResult) comes once every member has issued that collective;
/// the caller's clock does not move.
struct CollectiveValues
{
    uint64_t comm{0};
    uint64_t sequence{0};
    template <class A> void serialize(A& ar) { ar(comm, sequence); }
};

/// Asks for the bytes the calling rank's \p sequence-th receive (from 0) from \p peer (a
/// communicator rank) on \p comm received, one whose buffer it marked as carrying values.
/// The answer (CollectiveResult) comes once \p peer has issued the matching send; known
/// only if that send carried values of the receive's size.
struct P2PValues
{
    uint64_t comm{0};
    int32_t peer{0};
    uint64_t sequence{0};
    template <class A> void serialize(A& ar) { ar(comm, peer, sequence); }
};

/// ncclCommSplit: every member of \p parent calls it; members with the same color
/// form a new communicator, ranked by key (then by parent rank).
struct NcclCommSplit
{
    uint64_t parent{0};
    int32_t color{0}; ///< NCCL_SPLIT_NOCOLOR (-1): this rank joins no new communicator
    int32_t key{0};
    nccl::Environment tuning{}; ///< the rank's NCCL_* variables (and ncclConfig_t's CTA bounds)
    template <class A> void serialize(A& ar) { ar(parent, color, key, tuning); }
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

/// One ncclSend (send = true) or ncclRecv with \p peer, a communicator rank.
struct P2POp
{
    int32_t peer{0};
    uint64_t bytes{0};
    bool send{false};
    /// A send's buffer bytes when the rank knows them all and they are small (at most
    /// kMaxValueBytes), as NcclCollective::values: the receiver reads them back
    /// (P2PValues).  PyTorch's send_object_list sends a size, then pickled bytes.
    bool hasValues{false};
    std::string values;
    template <class A> void serialize(A& ar)
    {
        ar(peer, bytes, send, hasValues, BoundedString{values, kMaxValueBytes});
    }
};

/// Point-to-point operations that run as one NCCL operation on \p stream: a lone
/// ncclSend/ncclRecv, or those one ncclGroupStart/End issued on that stream.  The
/// k-th send from rank a to rank b matches b's k-th receive from a.
struct NcclP2P
{
    uint64_t comm{0};
    uint64_t stream{0};
    std::vector<P2POp> ops;
    template <class A> void serialize(A& ar)
    {
        ar(comm, stream, BoundedVector<P2POp, kMaxP2POps>{ops});
    }
};

/// A thread of the rank changes state outside CUDA (see interposer/thread_handoff.cc).
enum class HostEventKind : uint8_t
{
    Born = 0,   ///< the sender started thread \p lane, which runs from the sender's clock
    Block = 1,  ///< the sender blocks in a host wait until woken, or until \p atNs if set
    Resume = 2, ///< the sender left its host wait; \p atNs: the wake it consumed, or kNoTime
    Wake = 3,   ///< the sender woke a blocked thread, which resumes at the sender's clock
    Exit = 4,   ///< thread \p lane ended (or could not be started)
    /// The sender (a rank's first thread) has waited on a network socket for long: it
    /// waits for another process (a TCPStore key another rank sets), holds nothing back
    /// until it says Resume, and resumes where simulated time is then.
    BlockOutside = 5,
};

inline constexpr int64_t kNoTime = -1;

struct HostEvent
{
    HostEventKind kind{HostEventKind::Block};
    uint32_t lane{0};
    int64_t atNs{kNoTime};
    template <class A> void serialize(A& ar) { ar(kind, lane, atNs); }
};

/// cudaLaunchHostFunc / cudaStreamAddCallback: \p stream holds at this point until
/// the rank reports the host function \p id done.
struct HostFunction
{
    uint64_t stream{0};
    uint64_t id{0};
    template <class A> void serialize(A& ar) { ar(stream, id); }
};

/// The host function \p id returned, at the sender's clock.
struct HostFunctionDone
{
    uint64_t id{0};
    template <class A> void serialize(A& ar) { ar(id); }
};

/// Host time charged between GPU calls, by where it came from (host_time::Source order:
/// recorded context, context by module, context without sites, call kind, recording
/// median, measured here).
struct HostTimeTotals
{
    std::array<int64_t, 6> ns{};
    std::array<uint64_t, 6> gaps{};
    /// Small device-to-host reads the value shadow did not know: served from the
    /// recording's read-back values, and read as zeros.
    uint64_t readbacksServed{0};
    uint64_t readbacksZeros{0};
    template <class A> void serialize(A& ar) { ar(ns, gaps, readbacksServed, readbacksZeros); }
};

struct Goodbye
{
    uint64_t peakDeviceBytes{0};
    HostTimeTotals hostTime;
    template <class A> void serialize(A& ar) { ar(peakDeviceBytes, hostTime); }
};

/// phantora-rank -> bridge, once a second from the process that stays the parent of
/// a served run's command (a rank, or a launcher of ranks such as torchrun): a
/// heartbeat while the command runs, and its exit status once it has ended.  The
/// bridge learns from it which ranks died (the command's exit) and which host went
/// away (the heartbeats stop).  Not a rank's request: the bridge answers it with a
/// SupervisorNote and hands it to no engine.
struct Watch
{
    std::string token;
    std::string id;   ///< "HOST:PID", unique per phantora-rank; ranks name it in Hello
    std::string host; ///< the host's name (gethostname)
    int32_t pid{0};   ///< phantora-rank's
    int32_t rank{-1}; ///< the rank it starts when known (RANK or SLURM_PROCID), else -1
    int32_t commandPid{0};
    std::string command; ///< the program it runs (argv[0])
    bool exited{false};
    bool clean{false};       ///< exited with status 0
    std::string exitMessage; ///< "exited with status 3", "was killed by signal 9 (Killed)"
    template <class A> void serialize(A& ar)
    {
        ar(BoundedString{token}, BoundedString{id}, BoundedString{host}, pid, rank, commandPid,
           BoundedString{command}, exited, clean, BoundedString{exitMessage});
    }
};

using Request = std::variant<Hello, KernelLaunch, Memcpy, Synchronize, NcclCommInit, NcclCollective,
                             NcclCommDestroy, Goodbye, EventRecord, StreamWaitEvent, EventWait,
                             EventElapsed, NcclCommSplit, NcclP2P, HostEvent, HostFunction,
                             HostFunctionDone, CollectiveValues, Watch, P2PValues>;

struct RequestEnvelope
{
    uint64_t seq{0};
    int64_t clockNs{0}; ///< the calling thread's simulated clock when it made the call
    Request body;
    uint32_t lane{0};  ///< the calling thread (0: the thread that connected first)
    uint64_t order{0}; ///< position among all of this rank's requests, from 0
    /// A node of a CUDA graph being replayed (cudaGraphLaunch): its launch cost is the
    /// graph's, and its stream idles the GPU spec's graph node gap after it instead of
    /// the stream gap.
    bool graphNode{false};
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
    int64_t callOverheadNs{0};  ///< per call that submits GPU work (see CpuSpec)
    int64_t queryOverheadNs{0}; ///< per other call
    /// This machine's CPU time -> the recording host's (their host_speed ratio), for the
    /// host time the profile does not hold.
    double localCpuScale{1.0};
    /// The program's recorded host time between GPU calls (host_time::GapTable bytes);
    /// empty: none recorded, measure it here.
    std::string hostTimeTable;
    /// The recorded values of small device-to-host reads it returns
    /// (host_time::ReadbackTable bytes); empty: none.
    std::string readbackTable;
    template <class A> void serialize(A& ar)
    {
        ar(BoundedString{gpuName}, gpuMemoryBytes, deviceCount, localDevice, smCount, ccMajor,
           ccMinor, cpuTimeScale, callOverheadNs, queryOverheadNs, localCpuScale,
           BoundedString{hostTimeTable, kMaxHostTableBytes},
           BoundedString{readbackTable, kMaxHostTableBytes});
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

/// The answer to CollectiveValues and P2PValues: the caller's receive buffer bytes, when every
/// member sent its values and the operation could be computed (known = false: the
/// result is unknown, and the buffer reads as zeros).
struct CollectiveResult
{
    bool known{false};
    std::string values;
    /// The reader's clock once it has them: the last member's issue, if later than its own.
    int64_t clockNs{0};
    template <class A> void serialize(A& ar)
    {
        ar(known, BoundedString{values, kMaxValueBytes}, clockNs);
    }
};

/// bridge -> phantora-rank: the answer to each Watch (the bridge is alive), and at
/// the end of the run whether it ended well; after a failure phantora-rank stops its
/// command, whose ranks would otherwise wait for a bridge that is gone.
struct SupervisorNote
{
    enum class State : uint8_t
    {
        Running = 0,
        Done = 1,
        Failed = 2,
    };
    State state{State::Running};
    std::string message; ///< why the run failed
    template <class A> void serialize(A& ar) { ar(state, BoundedString{message}); }
};

using Reply = std::variant<Welcome, Resume, CommReady, Failure, QueryAnswer, Elapsed,
                           CollectiveResult, SupervisorNote>;

struct ReplyEnvelope
{
    uint64_t seq{0};
    Reply body;
};

const char* RequestName(const Request& r);

} // namespace phantora::wire
