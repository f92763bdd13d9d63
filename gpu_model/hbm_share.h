// How much of a collective's time memory-bound kernels ran beside it on one GPU, and how
// much that slows the collective.
//
// NCCL's kernels move every byte through the GPU's memory (they read the local buffer,
// write what the peers send and reduce the two), on one CTA per channel.  Beside a kernel
// that keeps the HBM busy from every SM, those few CTAs get a small share of the memory
// bandwidth and the collective crawls, while the kernel hardly notices: on 2 x H100 an
// all-reduce of 32 or 256 MiB beside 64 and 256 MiB fp32 adds took x2.15-2.62 its time
// alone (median x2.26), the adds x1.08-1.14 (bench/interference/README.md, "--cover 1.5").
// Beside GEMMs, which keep the SMs rather than the memory busy, the collective's slowdown
// is the SM sharing's (sm_sharing.h).  A collective beside memory-bound kernels for a
// share f of its time therefore progresses at 1 - f (1 - r) of its speed alone, where r is
// its speed beside such kernels ([gpu] comm_rate_beside_memory_bound).
//
// The share is taken over the collective's window as the network ends it alone: when
// that end is final, every kernel that starts before it is placed (engine/commit_policy.h),
// so the answer does not depend on how far the program's host had run ahead.  The
// kernels after that end are taken to continue the same mix.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace phantora
{

class HbmShare
{
public:
    /// Remembers that a memory-bound kernel ran over [startNs, endNs).  Copies are not
    /// remembered: the copy engines move them, whose few requests in flight do not crowd
    /// NCCL's CTAs out of the memory system as loads from every SM do.
    void Add(int64_t startNs, int64_t endNs);
    /// The share of [fromNs, toNs) that the remembered memory-bound work covers (0-1).
    double Share(int64_t fromNs, int64_t toNs) const;

    /// A collective's speed, as a share of its speed alone, beside memory-bound work for
    /// a share \p share of its time, given its speed \p rateBeside beside such work.
    static double Rate(double share, double rateBeside);
    /// When a collective that the network runs over [startNs, aloneEndNs) ends at
    /// \p rate of that speed.
    static int64_t EndAt(int64_t startNs, int64_t aloneEndNs, double rate);

private:
    /// Recent work in placement order: a collective only looks back over its own length.
    std::deque<std::pair<int64_t, int64_t>> m_spans;
};

} // namespace phantora
