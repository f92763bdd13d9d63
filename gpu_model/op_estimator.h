// Durations for ops the profile has not measured, each by the mechanism that sets it
// (the chain's order and its errors: Chain in op_estimator.cc, gpu_model/README.md):
//   ShapeScaled: the same op measured at other shapes: a kernel whose arguments say its
//                bytes and whose grid does not (norms, softmax) scaled along the bandwidth
//                curve between the two sizes, another kernel by its waves of threads; a
//                GEMM or cuDNN op of the same family by its work (a GEMM sample too small
//                to fill the GPU: by the target's waves of tiles and its k instead, where
//                that is less); a copy or memset by the line through the measured ones of
//                its direction (and host memory) at the nearest sizes;
//   Bytes:       a memory-bound kernel whose launch says how many bytes it moves
//                (kernel_traffic.h), at the bandwidth the profile measured for such bytes
//                (bandwidth_curve.h);
//   Family:      another instantiation of the same kernel template (other element types
//                or functors) measured at the nearest launch shape, scaled by the threads;
//   Roofline:    a GEMM's or cuDNN op's flops at the GPU's peak for its data type, or its
//                bytes at the HBM bandwidth, whichever takes longer (batch norm: bytes);
//                a convolution's work (convolution_work.h) on the profile's measured
//                curves instead: its implicit GEMM's tensor-core flops at the time the
//                profile's GEMMs of that many flops took, or its bytes at the measured
//                bandwidth, whichever is longer, plus what the profile's recorded
//                convolutions of the same pass took beyond that (ConvolutionNs).
// Never fails: the caller falls back to the scenario's default when none applies.
#pragma once

#include "gpu_model/bandwidth_curve.h"
#include "gpu_model/convolution_work.h"
#include "gpu_model/cost_source.h"
#include "gpu_model/gpu_spec.h"
#include "gpu_model/kernel_traffic.h"
#include "gpu_model/profile/cudnn_signature.h"
#include "gpu_model/profile/gemm_signature.h"
#include "gpu_model/profile/profile_reader.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace phantora
{

class OpEstimator
{
public:
    using Entry = std::pair<const profile::OpKey, profile::OpStats>;
    /// Measured ops the estimates must not see: how the estimators' accuracy is measured
    /// (estimator_accuracy.h) without the op's own measurement, or its program's.
    using Hidden = std::function<bool(const Entry&)>;

    /// \p profile may be null (no profile in the scenario): only the roofline remains.
    /// \p hidden is asked at every estimate, so it may change between them.
    OpEstimator(const profile::ProfileReader* profile, const GpuSpec& gpu, Hidden hidden = {});

    /// The estimators in KernelCostTable's order, the first that applies; nullopt where
    /// none does (the table then takes the copy's \p modelNs or the scenario's default).
    /// \p argFacts: the launch's argument facts (kernel_params.h ArgFacts); \p workFacts:
    /// what the interposer read from its struct arguments (kernel_work.h).
    std::optional<OpCost> Estimate(const profile::OpKey& key, std::string_view argFacts = {},
                                   std::string_view workFacts = {}) const;
    /// Every estimator's answer for \p key, in the chain's order (for the accuracy figures).
    std::vector<OpCost> Candidates(const profile::OpKey& key, std::string_view argFacts = {},
                                   std::string_view workFacts = {}) const;

    /// \p workFacts of a host copy: "pinned=1" where its host memory is pinned.
    /// The op itself is never used, so for a measured op this is the estimate it would
    /// get without its measurement (how the estimator's accuracy is checked).
    std::optional<int64_t> ShapeScaled(const profile::OpKey& key,
                                       std::string_view workFacts = {}) const;
    std::optional<int64_t> Roofline(const profile::OpKey& key) const;
    std::optional<int64_t> FromBytes(const profile::OpKey& key, std::string_view argFacts,
                                     std::string_view workFacts = {}) const;
    std::optional<int64_t> FamilyScaled(const profile::OpKey& key) const;

private:
    bool Visible(const Entry& e) const { return !m_hidden || !m_hidden(e); }
    /// Estimate's chain: its first answer, or (\p firstOnly false) every one.
    std::vector<OpCost> Chain(const profile::OpKey& key, std::string_view argFacts,
                              std::string_view workFacts, bool firstOnly) const;
    /// \p entry's measurements on m_kernelBytes, where its bytes are known.
    void AddBytesPoints(const Entry& entry);
    /// \p entry (a GEMM) on m_gemmFlops.
    void AddGemmPoint(const Entry& entry);
    std::optional<int64_t> ScaledByBytes(const profile::OpKey& key,
                                         const KernelTraffic& target) const;
    std::optional<double> BytesTimeNs(const profile::OpKey& key, const KernelTraffic& t) const;
    /// \p bytes of a kernel as its SMs see them (the waves of its blocks).
    double WaveBytes(const profile::OpKey& key, double bytes) const;

    std::optional<int64_t> ScaledKernel(const profile::OpKey& key) const;
    std::optional<int64_t> ScaledGemm(const profile::OpKey& key) const;
    std::optional<int64_t> ScaledCudnn(const profile::OpKey& key) const;
    std::optional<int64_t> CudnnRoofline(const profile::OpKey& key) const;
    /// An attention call from the time model fitted to the measured calls of its pass
    /// (attention_work.h); nullopt with too few of them.
    std::optional<double> AttentionNs(const profile::OpKey& key,
                                      const profile::CudnnSignature& s) const;
    /// A small-channel convolution from the recorded one nearest it, by flops.
    std::optional<int64_t> ScaledSmallChannelConvolution(const profile::OpKey& key,
                                                         const profile::CudnnSignature& s) const;
    /// A convolution's work on the measured curves, without (\p withCallCost false) or
    /// with what recorded convolutions like it took beyond it (ConvolutionCallNs).
    std::optional<double> ConvolutionNs(const profile::OpKey& key, const ConvolutionWork& c,
                                        bool withCallCost) const;
    /// The median over the visible recorded convolutions (not \p key) of \p target's pass,
    /// type and layout (else its pass) of their time beyond their work (0 if none, or
    /// if they took less).
    double ConvolutionCallNs(const profile::OpKey& key, const ConvolutionWork& target) const;
    /// Batch norm's bytes on the measured bandwidth curve, its channels as its blocks.
    std::optional<double> BatchNormBytesNs(const profile::OpKey& key,
                                           const profile::CudnnSignature& s) const;
    /// \p pinned: a host copy from or to pinned memory.
    std::optional<int64_t> ScaledCopy(const profile::OpKey& key, bool pinned) const;
    double PeakCopyBytesPerSecond(const profile::OpKey& key) const;

    double Waves(double threads) const;
    static double GemmTiles(const profile::GemmSignature& g);
    double GemmWaves(const profile::GemmSignature& g) const;

    const profile::ProfileReader* m_profile;
    const GpuSpec& m_gpu;
    Hidden m_hidden;
    /// Time against bytes moved, from the measured copies, memsets and kernels whose
    /// launch says their bytes (kernel_traffic.h).
    BandwidthCurve m_kernelBytes;
    /// The same from TensorIterator's unrolled and strided loops (kernel_traffic.h Access).
    BandwidthCurve m_unrolledBytes;
    BandwidthCurve m_stridedBytes;
    /// Measured copies and memsets by kind, direction and (host copies) whether the host
    /// memory was pinned.
    using CopyCurveKey = std::tuple<profile::OpKind, std::string, bool>;
    std::map<CopyCurveKey, BandwidthCurve> m_copies;
    /// Time against flops of the measured GEMMs, by operand type (both inputs alike).
    std::map<std::string, BandwidthCurve> m_gemmFlops;
    /// Measured kernels by template (KernelBaseName).
    std::multimap<std::string, const Entry*> m_families;
};

} // namespace phantora
