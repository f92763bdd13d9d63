// The real bytes of small device buffers.  Device memory is never materialised, but
// a program sometimes steers by what it reads back from a small buffer it wrote
// itself or gathered from other ranks (DDP's check that every rank has the same
// parameter shapes, counts, flags).  So bytes written by small host-to-device copies
// and memsets are kept here, moved by small device-to-device copies and read back by
// device-to-host copies; everything else reads as zeros, as before.  A kernel's
// outputs are unknown, so what a kernel writes is forgotten: the addresses its
// signature says are outputs (kernel_signature.h: non-const pointers, PyTorch's operand
// arrays and reductions) and a GEMM's output matrix.  Without that, memory a caching
// allocator (PyTorch's) hands out again keeps the bytes an earlier, freed tensor was
// given by a host-to-device copy, and a kernel's result read back from it (the nonzero
// count of masked_select, a gradient norm) returns those stale bytes.  What a kernel
// only reads keeps its bytes; outputs a signature does not reveal (a lambda's
// captures) still keep stale ones.  The few kernels kernel_values.h computes (int64
// sums and additions over small known inputs) write their real results.
//
// A small NCCL collective whose send buffer is fully known carries its bytes to the
// bridge; its receive buffer is marked pending here, and the first copy that reads
// from it asks the bridge for the result (wire::CollectiveValues).  A small ncclSend
// carries its bytes the same way, and the matching ncclRecv's buffer asks for them
// (wire::P2PValues).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace phantora::interposer
{

class ValueShadow
{
public:
    /// Copies and collectives of at most this many bytes carry values.
    static constexpr std::size_t kMaxBytes = 64 * 1024;

    /// Where a pending buffer's bytes come from: collective \p sequence on \p comm, or
    /// (p2p) the \p sequence-th receive from communicator rank \p peer on it.
    struct Source
    {
        uint64_t comm{0};
        uint64_t sequence{0};
        bool p2p{false};
        int peer{0};
    };
    /// Fetches a pending result: the receive buffer's bytes, or nullopt.
    using Fetch = std::function<std::optional<std::string>(const Source& source)>;

    static ValueShadow& Get();

    /// A host-to-device copy (or memset, with \p src the filled bytes).
    void Write(uint64_t dst, const void* src, std::size_t n);
    /// \p n bytes at \p dst now hold unknown (or zero-reading) bytes.
    void Forget(uint64_t dst, std::size_t n);
    /// Work on the device (a kernel, a library call) writes at each of \p count
    /// addresses: a known piece holding one reads as unknown from that address
    /// to the piece's end (one H2D copy's bytes: one tensor once; what lies before the
    /// address is a live neighbour, or the same tensor's bytes the kernel does not
    /// write), and a pending result holding one is dropped.  An address holding no
    /// known byte changes nothing.
    void MayWrite(const uint64_t* addresses, std::size_t count);
    /// A device-to-device copy.
    void Copy(uint64_t dst, uint64_t src, std::size_t n, const Fetch& fetch);
    /// A device-to-host copy: known bytes from the shadow, zeros elsewhere.  False when
    /// the shadow knew no byte of it (nothing known or pending there): the read is then
    /// open to a recorded value (interposer/host_time.h, ServeRecordedRead).
    bool Read(void* dst, uint64_t src, std::size_t n, const Fetch& fetch);
    /// All \p n bytes at \p src, if every one is known (pending results are fetched).
    std::optional<std::string> Known(uint64_t src, std::size_t n, const Fetch& fetch);
    /// The receive buffer of a collective that carried values: its bytes come from
    /// the bridge when first read.
    void MarkPending(uint64_t dst, std::size_t n, const Source& source);

private:
    struct Pending
    {
        uint64_t end;
        Source source;
    };
    void ForgetLocked(uint64_t dst, std::size_t n);
    /// Calls \p visit(offset from src, bytes, length) for each known piece of
    /// [src, src + n), in address order, until it returns false (then returns false).
    bool
    ForEachKnownLocked(uint64_t src, std::size_t n,
                       const std::function<bool(uint64_t, const char*, std::size_t)>& visit) const;
    void WriteLocked(uint64_t dst, const char* src, std::size_t n);
    /// Fetches every pending result overlapping [src, src + n).
    void Resolve(uint64_t src, std::size_t n, const Fetch& fetch,
                 std::unique_lock<std::mutex>& lock);

    std::mutex m_mutex;
    std::map<uint64_t, std::string> m_bytes; ///< start -> bytes; ranges do not overlap
    std::map<uint64_t, Pending> m_pending;   ///< start -> pending result; no overlaps
};

/// Asks the bridge for a collective's result (blocks until every member issued it), or
/// for a receive's bytes (blocks until the peer issued the send).
ValueShadow::Fetch BridgeFetch();

} // namespace phantora::interposer
