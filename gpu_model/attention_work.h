// What a cuDNN fused attention call (cudnnSdpaFprop / cudnnSdpaBprop) asks of the GPU, and
// its time from the profile's measured attention calls of the same pass.  A flash-style
// kernel spends its time on three things: the matrix products on the tensor cores (its
// flops), the softmax over every score of the b x h x s_q x s_kv matrix (an exponential
// per score on the SMs' special-function units, whatever the head dimension: a small head
// dimension makes it the larger part), and a fixed cost per call (launch, the tiles'
// prologue and the causal diagonal's partial tiles).  Dropout draws one random number per
// score as well.  So
//     t = fixed + flops * nsPerFlop + scores * nsPerScore (+ dropout scores * nsPerDraw),
// fitted to the measured calls of the pass (OpEstimator::AttentionNs).  Scaling the
// nearest measured call by its flops carried that call's efficiency to the target: a
// head dimension of 16 or a short sequence at a tenth of the rate of a long one
// (gpu_model/README.md has the measured errors).
#pragma once

#include "gpu_model/profile/cudnn_signature.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace phantora
{

struct AttentionWork
{
    bool backward{false};
    double flops{0};  ///< CudnnSignature::Flops (causal halved, 2.5x backward)
    double scores{0}; ///< b*h*s_q*s_kv, halved when causal
    bool dropout{false};
    /// bf16 and f16 share the tensor cores' rate: one group ("half"); f32 another.
    std::string typeGroup;

    /// nullopt for a signature that is no attention call.
    static std::optional<AttentionWork> Of(const profile::CudnnSignature& s);
    /// The same pass and type group: one time model covers them.
    bool SameModel(const AttentionWork& o) const
    {
        return backward == o.backward && typeGroup == o.typeGroup;
    }
};

/// t = fixed + flops*nsPerFlop + scores*nsPerScore + (dropout ? scores : 0)*nsPerDraw,
/// each term non-negative, fitted by least squares on relative errors (a 50 us call
/// counts as much as a 5 ms one) to measured calls of one pass.
class AttentionTimeModel
{
public:
    struct Point
    {
        AttentionWork work;
        double ns;
    };
    /// nullopt with fewer measured calls of distinct work than the terms they can tell
    /// apart (then the nearest call scaled by flops is all there is).
    static std::optional<AttentionTimeModel> Fit(const std::vector<Point>& points);
    double TimeNs(const AttentionWork& w) const;
    /// fixed ns, ns per flop, ns per score, ns per dropout draw.
    const std::array<double, 4>& Terms() const { return m_terms; }

private:
    std::array<double, 4> m_terms{};
};

} // namespace phantora
