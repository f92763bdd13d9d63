// How compute kernels and NCCL kernels share one GPU's streaming multiprocessors.
//
// An NCCL collective is a kernel of one CTA per channel, each CTA resident on its own SM
// from the moment the kernel starts until the collective ends (waiting for peers
// included).  Two things follow on a real GPU, and both are measured in
// bench/interference/README.md (4 x H200, NCCL 2.28.9):
//
//  1. A compute kernel that needs the whole GPU runs on the SMs the collective leaves:
//     while C channels hold C of the S SMs it progresses at (S - C) / S of its speed.
//  2. A collective launched while a kernel that fills the GPU runs cannot place its CTAs
//     until that kernel's CTAs have all been dispatched: the block scheduler finishes
//     the kernel in front before it gives SMs to the next one, so the collective starts
//     (and its peers wait for it) when that kernel ends.  A kernel of fewer CTAs than SMs
//     leaves room and delays nothing.
//
// Memory-bandwidth sharing (the collective's HBM traffic against a memory-bound kernel)
// is not modelled here.  The model is causal in the order ops reach the timeline: a
// kernel's duration is fixed when it is placed, from the collectives placed before it
// (their network end when known, else their start plus the NCCL tuning model's
// estimate); a collective placed later does not stretch it.
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

    /// Remembers a placed kernel, for CollectiveStart().
    void AddKernel(uint64_t stream, int64_t startNs, int64_t endNs, uint64_t ctas);

    /// When a collective of \p channels CTAs, launchable at \p readyNs on \p stream, gets
    /// its SMs: after any kernel on another stream that runs at that instant and leaves
    /// fewer than \p channels SMs free.
    int64_t CollectiveStart(uint64_t stream, int64_t readyNs, uint32_t channels) const;

private:
    struct Held
    {
        int64_t startNs;
        int64_t endNs;
        uint32_t channels;
        bool finished;
    };
    struct Kernel
    {
        int64_t startNs;
        int64_t endNs;
        uint64_t ctas;
    };

    /// SMs the collectives hold at \p t, and the next instant that changes (or max).
    std::pair<uint32_t, int64_t> HeldAt(int64_t t) const;
    /// Drops what ended long before \p nowNs (nothing can start that early any more).
    void Forget(int64_t nowNs);

    uint32_t m_sms;
    std::map<uint64_t, Held> m_collectives;           ///< by ticket
    std::map<uint64_t, std::deque<Kernel>> m_kernels; ///< recent kernels by stream
    int64_t m_latestNs{0};
};

} // namespace phantora
