// How compute kernels and NCCL kernels share one GPU's streaming multiprocessors.
//
// An NCCL collective is a kernel of one CTA per channel, each CTA resident on its own SM
// from the moment the kernel starts until the collective ends (waiting for peers
// included).  Two things follow on a real GPU, and both are measured in
// bench/interference/README.md (4 x H200, NCCL 2.28.9):
//
//  1. A compute kernel that needs the whole GPU runs on the SMs the collective leaves:
//     while C channels hold C of the S SMs it progresses at (S - C) / S of its speed.
//     A persistent kernel (cuBLAS's GEMMs on Hopper: one CTA per SM, each working through
//     its own share of the tiles for the kernel's whole duration) cannot use fewer SMs:
//     its CTAs that find no free SM wait until one frees, which is when the collective
//     ends or when the first CTAs finish their share, so it takes up to twice as long.
//     Measured in a torch.profiler trace of DDP on 2 x H100 (bench/accuracy/README.md):
//     GEMMs wholly beside an all-reduce x1.85 (median), memory-bound kernels x1.05-1.10.
//  2. A collective launched while a kernel that fills the GPU runs cannot place its CTAs
//     until that kernel's CTAs have all been dispatched: the block scheduler finishes
//     the kernel in front before it gives SMs to the next one, so the collective starts
//     (and its peers wait for it) when that kernel ends.  A kernel of fewer CTAs than SMs
//     leaves room and delays nothing, and kernels that start after the collective became
//     launchable come after it.
//
// Memory-bandwidth sharing (the collective's HBM traffic against a memory-bound kernel)
// is not modelled here.  A kernel's duration is fixed when it is placed, from the
// collectives known then (their network end when known, else their start plus the NCCL
// tuning model's estimate).  A collective often becomes known later than kernels that run
// beside it: the program enqueued them first, or the collective waited in its stream
// behind another one whose end the network had not given yet.  Reflow() then charges
// those kernels what it costs them and moves the rest of their stream's placed work back
// by as much, so the stream's later work starts where it would have.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>

namespace phantora
{

class SmSharing
{
public:
    /// A kernel whose CTA count is unknown (cuBLAS, cuDNN ops): taken to fill the GPU.
    static constexpr uint64_t kFillsGpu = std::numeric_limits<uint64_t>::max();
    /// A persistent library kernel (cuBLAS GEMMs on Hopper): one CTA per SM for its whole
    /// duration, see 1. above.
    static constexpr uint64_t kPersistent = std::numeric_limits<uint64_t>::max() - 1;

    /// \p smCount SMs; 0 turns the model off (kernels and collectives never interact).
    explicit SmSharing(int32_t smCount);

    bool Enabled() const { return m_sms > 0; }

    /// A collective's CTAs hold \p channels SMs from \p startNs; until FinishCollective()
    /// they are expected to until \p expectedEndNs.
    void AddCollective(uint64_t ticket, int64_t startNs, int64_t expectedEndNs, uint32_t channels);
    /// The network ended collective \p ticket at \p endNs.
    void FinishCollective(uint64_t ticket, int64_t endNs);

    /// When a kernel of \p ctas CTAs that takes \p durationNs alone ends if it starts at
    /// \p startNs, given the collectives' SMs.
    int64_t KernelEnd(int64_t startNs, int64_t durationNs, uint64_t ctas) const;

    /// Remembers a placed kernel, for CollectiveStart() and Reflow().
    void AddKernel(uint64_t stream, int64_t startNs, int64_t endNs, uint64_t ctas);

    /// Once collective \p ticket has its start: the kernels placed on other streams than
    /// \p stream before it was known, which it overlaps, take longer (as KernelEnd() would
    /// have made them), and the kernels placed after them on their stream move back.
    /// Returns, per stream whose placed work moved, where its last kernel ended and where
    /// it ends now.
    std::map<uint64_t, std::pair<int64_t, int64_t>> Reflow(uint64_t ticket, uint64_t stream);

    /// When a collective of \p channels CTAs, launchable at \p readyNs on \p stream, gets
    /// its SMs: after the kernels on other streams that run at that instant and leave
    /// fewer than \p channels SMs free (not after kernels that start later).
    int64_t CollectiveStart(uint64_t stream, int64_t readyNs, uint32_t channels) const;

private:
    struct Held
    {
        int64_t startNs;
        int64_t endNs;
        uint32_t channels;
        bool finished;
        uint64_t knownFrom; ///< kernels placed from this number on saw it
        bool reflowed{false};
    };
    struct Kernel
    {
        int64_t startNs;
        int64_t endNs;
        uint64_t ctas;
        uint64_t number; ///< placement order
    };

    /// How much longer \p k takes beside collective \p c than alone.
    int64_t ExtraBeside(const Held& c, const Kernel& k) const;

    /// SMs left to compute while collectives hold \p held (at least one).
    double FreeSms(uint32_t held) const;
    /// SMs a kernel of \p ctas CTAs can use.
    double SmsNeeded(uint64_t ctas) const;
    /// Rounds a kPersistent kernel's CTAs take on the SMs left while \p held are held.
    int64_t PersistentRounds(uint32_t held) const;
    /// KernelEnd() of a kPersistent kernel.
    int64_t PersistentKernelEnd(int64_t startNs, int64_t durationNs) const;
    /// SMs the collectives hold at \p t, and the next instant that changes (or max).
    std::pair<uint32_t, int64_t> HeldAt(int64_t t) const;
    /// Drops what ended long before \p nowNs (nothing can start that early any more).
    void Forget(int64_t nowNs);

    uint32_t m_sms;
    std::map<uint64_t, Held> m_collectives;           ///< by ticket
    std::map<uint64_t, std::deque<Kernel>> m_kernels; ///< recent kernels by stream
    uint64_t m_placed{0};                             ///< kernels placed so far
    int64_t m_latestNs{0};
};

} // namespace phantora
