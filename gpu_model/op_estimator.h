// Durations for ops the profile has not measured.  Never fails: the caller falls
// back to the scenario's default when neither estimate applies.
//   ShapeScaled: the same kernel (or a GEMM or cuDNN op of the same family, or a copy of
//                the same direction) measured at other shapes, scaled by the work
//                (a GEMM sample too small to fill the GPU: by the target's waves of
//                tiles and its k instead, where that is less);
//   Bytes:       a data-movement kernel whose launch says how many bytes it moves
//                (copy_kernel_bytes.h), at the copy bandwidth the profile measured;
//   Family:      another instantiation of the same kernel template (other element types
//                or functors) measured at the nearest launch shape, scaled by the threads;
//   Roofline:    a GEMM's or cuDNN op's flops at the GPU's peak for its data type, or its
//                bytes at the HBM bandwidth, whichever takes longer (batch norm: bytes).
#pragma once

#include "gpu_model/cost_source.h"
#include "gpu_model/gpu_spec.h"
#include "gpu_model/profile/gemm_signature.h"
#include "gpu_model/profile/profile_reader.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
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
    std::optional<OpCost> Estimate(const profile::OpKey& key, const std::string& argFacts,
                                   int64_t modelNs = -1) const;

    /// \p modelNs: the scenario's bandwidth model of a copy (linear in its bytes), which
    /// carries a copy past the largest measured size; -1 for other ops.
    /// The op itself is never used, so for a measured op this is the estimate it would
    /// get without its measurement (how the estimator's accuracy is checked).
    std::optional<int64_t> ShapeScaled(const profile::OpKey& key, int64_t modelNs = -1) const;
    std::optional<int64_t> Roofline(const profile::OpKey& key) const;
    std::optional<int64_t> FromBytes(const profile::OpKey& key, const std::string& argFacts) const;
    std::optional<int64_t> FamilyScaled(const profile::OpKey& key) const;
    /// Bytes per second a device-to-device copy reaches (read plus write): the profile's
    /// largest measured DtoD memcpy, else the scenario's HBM bandwidth.
    double CopyBytesPerSecond() const { return m_copyBytesPerSecond; }

private:
    bool Visible(const Entry& e) const { return !m_hidden || !m_hidden(e); }
    /// The cheapest visible measured kernel: what a launch costs however little it moves.
    double KernelFloorNs() const;

    std::optional<int64_t> ScaledKernel(const profile::OpKey& key) const;
    std::optional<int64_t> ScaledGemm(const profile::OpKey& key) const;
    std::optional<int64_t> ScaledCudnn(const profile::OpKey& key) const;
    std::optional<int64_t> CudnnRoofline(const profile::OpKey& key) const;
    std::optional<int64_t> ScaledCopy(const profile::OpKey& key, int64_t modelNs) const;

    double Waves(double threads) const;
    static double GemmTiles(const profile::GemmSignature& g);
    double GemmWaves(const profile::GemmSignature& g) const;

    const profile::ProfileReader* m_profile;
    const GpuSpec& m_gpu;
    Hidden m_hidden;
    double m_copyBytesPerSecond{0};
    /// Measured kernels, the cheapest first (KernelFloorNs).
    std::vector<const Entry*> m_kernelsByTime;
    /// Measured kernels by template (KernelBaseName).
    std::multimap<std::string, const Entry*> m_families;
};

} // namespace phantora
