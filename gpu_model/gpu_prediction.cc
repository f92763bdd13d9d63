#include "gpu_prediction.h"

#include "convolution_work.h"
#include "gpu_model/profile/cudnn_signature.h"
#include "gpu_model/profile/gemm_signature.h"
#include "kernel_traffic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>
#include <vector>

namespace phantora
{

using profile::CudnnOpClass;
using profile::CudnnSignature;
using profile::GemmSignature;
using profile::OpKey;
using profile::OpKind;

namespace
{
constexpr std::array<const char*, kPredictedClasses> kNames = {"compute", "memory",    "latency",
                                                               "issue",   "host_link", "unscaled"};

/// A kernel moving less than this share of its time's worth of bytes at the HBM peak is
/// not waiting on memory: at a tenth, nine tenths of its time would be left unexplained.
constexpr double kIssueBoundShare = 0.1;

/// The tile cuBLAS's and cuDNN's Hopper kernels most often compute per CTA (as
/// OpEstimator's waves count them).
constexpr double kTile = 128;

bool Has(std::string_view s, std::string_view part)
{
    return s.find(part) != std::string_view::npos;
}

/// Kernels outside cuBLAS and cuDNN that run on tensor cores, by the names their
/// libraries give them: PyTorch's flash and memory-efficient attention, CUTLASS and
/// Triton matrix products.
bool TensorCoreKernelName(std::string_view name)
{
    for (const char* part : {"flash", "fmha", "attention", "Attention", "gemm", "Gemm", "cutlass",
                             "mma", "matmul", "_mm_", "bmm"})
    {
        if (Has(name, part))
            return true;
    }
    return false;
}

void Require(const GpuSpec& gpu, bool ok, const char* figure)
{
    if (!ok)
        throw std::invalid_argument(fmt::format(
            "predicting one GPU from another needs both datasheets' {}; the {} datasheet has "
            "none (scenarios/gpus/README.md lists the figures)",
            figure, gpu.model));
}
} // namespace

const char* PredictedClassName(PredictedClass c)
{
    return kNames[static_cast<std::size_t>(c)];
}

GpuPrediction::GpuPrediction(const GpuSpec& source, const GpuSpec& target, double latencyFloorNs)
    : m_source(source), m_target(target), m_floorNs(std::max(latencyFloorNs, 0.0))
{
    for (const GpuSpec* g : {&source, &target})
    {
        Require(*g, g->hbmBitsPerSecond > 0, "hbm_bandwidth");
        Require(*g, g->smCount > 0, "sm_count");
        const auto bf16 = g->peakTflops.find("bf16");
        Require(*g, bf16 != g->peakTflops.end() && bf16->second > 0, "peak_tflops_bf16");
    }
}

double GpuPrediction::LatencyFloorNs(const profile::ProfileReader& profile)
{
    std::vector<double> medians;
    for (const auto& [key, stats] : profile.Ops())
    {
        if (key.kind == OpKind::Kernel && stats.medianNs > 0)
            medians.push_back(stats.medianNs);
    }
    if (medians.empty())
        return 0;
    const auto at = medians.begin() + static_cast<std::ptrdiff_t>(medians.size() / 10);
    std::nth_element(medians.begin(), at, medians.end());
    return *at;
}

double GpuPrediction::ClockFactor() const
{
    // No clock in a datasheet: the same clock (the latency part left as measured).
    if (m_source.smClockMhz <= 0 || m_target.smClockMhz <= 0)
        return 1.0;
    return static_cast<double>(m_source.smClockMhz) / static_cast<double>(m_target.smClockMhz);
}

double GpuPrediction::MemoryFactor() const
{
    return m_source.hbmBitsPerSecond / m_target.hbmBitsPerSecond;
}

double GpuPrediction::Peak(const GpuSpec& gpu, const std::string& type) const
{
    // A type one datasheet does not give runs at the tensor cores' bf16 rate on both.
    const auto a = m_source.peakTflops.find(type);
    const auto b = m_target.peakTflops.find(type);
    const bool both = a != m_source.peakTflops.end() && a->second > 0 &&
                      b != m_target.peakTflops.end() && b->second > 0;
    return gpu.peakTflops.at(both ? type : std::string("bf16")) * 1e12;
}

double GpuPrediction::ComputeFactor(double tiles, const std::string& type) const
{
    const double sourcePeak = Peak(m_source, type);
    const double targetPeak = Peak(m_target, type);
    if (tiles <= 0)
        return sourcePeak / targetPeak;
    // Each SM computes one tile at a time at its share of the peak: the op takes its
    // waves of tiles at one SM's rate.  Fewer tiles than SMs run at one SM's rate on
    // either GPU, however many SMs the other has.
    const double sourceWaves = std::ceil(tiles / m_source.smCount);
    const double targetWaves = std::ceil(tiles / m_target.smCount);
    const double sourcePerSm = sourcePeak / m_source.smCount;
    const double targetPerSm = targetPeak / m_target.smCount;
    return targetWaves / sourceWaves * sourcePerSm / targetPerSm;
}

GpuPrediction::Work GpuPrediction::Roofline(double flops, double bytes, double tiles,
                                            const std::string& type) const
{
    const double computeNs = flops / Peak(m_source, type) * 1e9;
    const double memoryNs = bytes * 8.0 / m_source.hbmBitsPerSecond * 1e9;
    if (computeNs >= memoryNs)
        return {PredictedClass::Compute, ComputeFactor(tiles, type)};
    return {PredictedClass::Memory, MemoryFactor()};
}

GpuPrediction::Work GpuPrediction::WorkOf(const OpKey& key, double workNs,
                                          std::string_view argFacts,
                                          std::string_view workFacts) const
{
    switch (key.kind)
    {
    case OpKind::Gemm:
        if (const auto g = GemmSignature::Parse(key.name))
        {
            const double tiles =
                std::ceil(static_cast<double>(std::max<int64_t>(g->m, 1)) / kTile) *
                std::ceil(static_cast<double>(std::max<int64_t>(g->n, 1)) / kTile) *
                static_cast<double>(std::max<int64_t>(g->batch, 1));
            return Roofline(g->Flops(), g->Bytes(), tiles, g->a);
        }
        break;
    case OpKind::Cudnn:
        if (const auto s = CudnnSignature::Parse(key.name))
        {
            if (s->Class() == CudnnOpClass::Normalization)
                return {PredictedClass::Memory, MemoryFactor()};
            if (const auto c = ConvolutionWork::Of(*s); c && !c->Depthwise())
            {
                // The implicit GEMM's tiles: its share of the tensor cores on each GPU.
                Work w = Roofline(c->TensorCoreFlops() * c->GemmTimeScale(), c->Bytes(), 0,
                                  c->GemmType());
                if (w.cls == PredictedClass::Compute)
                    w.factor *=
                        c->TileEfficiency(m_source.smCount) / c->TileEfficiency(m_target.smCount);
                return w;
            }
            if (s->Flops() > 0)
                return Roofline(s->Flops(), s->Bytes(), 0, s->Type());
            return {PredictedClass::Memory, MemoryFactor()};
        }
        break;
    case OpKind::Kernel:
        if (const auto t = TrafficOf(key, argFacts, workFacts))
        {
            const double memoryNs = t->bytes * 8.0 / m_source.hbmBitsPerSecond * 1e9;
            if (memoryNs < kIssueBoundShare * workNs)
                return {PredictedClass::Issue, ClockFactor()};
            return {PredictedClass::Memory, MemoryFactor()};
        }
        if (TensorCoreKernelName(key.name))
            return {PredictedClass::Compute, ComputeFactor(0, "bf16")};
        return {PredictedClass::Memory, MemoryFactor()};
    case OpKind::Memset:
        return {PredictedClass::Memory, MemoryFactor()};
    case OpKind::Memcpy:
        if (key.name == "DtoD")
            return {PredictedClass::Memory, MemoryFactor()};
        if ((key.name == "HtoD" || key.name == "DtoH") && m_source.pcieBitsPerSecond > 0 &&
            m_target.pcieBitsPerSecond > 0)
            return {PredictedClass::HostLink,
                    m_source.pcieBitsPerSecond / m_target.pcieBitsPerSecond};
        break;
    }
    return {PredictedClass::Unscaled, 1.0};
}

PredictedCost GpuPrediction::Scale(const OpKey& key, double sourceNs, std::string_view argFacts,
                                   std::string_view workFacts) const
{
    if (sourceNs <= 0)
        return {sourceNs, PredictedClass::Latency};
    // Copies have no kernel floor: a host copy's latency is the link's, in its factor.
    const bool kernel = key.kind != OpKind::Memcpy;
    const double latencyNs = kernel ? std::min(sourceNs, m_floorNs) : 0.0;
    const double workNs = sourceNs - latencyNs;
    const Work w = WorkOf(key, workNs, argFacts, workFacts);
    PredictedCost c;
    c.ns = latencyNs * ClockFactor() + workNs * w.factor;
    c.cls = latencyNs >= workNs ? PredictedClass::Latency : w.cls;
    return c;
}

} // namespace phantora
