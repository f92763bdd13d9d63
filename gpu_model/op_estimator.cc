#include "op_estimator.h"

#include "copy_kernel_bytes.h"
#include "gpu_model/profile/cudnn_signature.h"
#include "gpu_model/profile/gemm_signature.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace phantora
{

using profile::CudnnOpClass;
using profile::CudnnSignature;
using profile::GemmSignature;
using profile::OpKey;
using profile::OpKind;

namespace
{
double LogRatio(double a, double b)
{
    return std::abs(std::log(std::max(a, 1.0) / std::max(b, 1.0)));
}

/// What a cuDNN op's time scales with: its flops, or for memory-bound normalisation its
/// bytes.
double CudnnWork(const CudnnSignature& s)
{
    return s.Class() == CudnnOpClass::Normalization ? s.Bytes() : s.Flops();
}
} // namespace

OpEstimator::OpEstimator(const profile::ProfileReader* profile, const GpuSpec& gpu, Hidden hidden)
    : m_profile(profile), m_gpu(gpu), m_hidden(std::move(hidden)),
      m_copyBytesPerSecond(gpu.hbmBitsPerSecond / 8.0)
{
    if (!m_profile)
    {
        return;
    }
    uint64_t largestCopy = 0;
    for (const auto& entry : m_profile->Ops())
    {
        const auto& [key, stats] = entry;
        if (key.kind == OpKind::Memcpy && key.name == "DtoD" && key.bytes > largestCopy &&
            stats.medianNs > 0)
        {
            largestCopy = key.bytes;
            m_copyBytesPerSecond = 2.0 * static_cast<double>(key.bytes) / stats.medianNs * 1e9;
        }
        if (key.kind == OpKind::Kernel)
        {
            m_families.emplace(std::string(KernelBaseName(key.name)), &entry);
            m_kernelsByTime.push_back(&entry);
        }
    }
    std::stable_sort(m_kernelsByTime.begin(), m_kernelsByTime.end(),
                     [](const Entry* a, const Entry* b)
                     { return a->second.medianNs < b->second.medianNs; });
}

std::optional<OpCost> OpEstimator::Estimate(const OpKey& key, const std::string& argFacts,
                                            int64_t modelNs) const
{
    if (auto v = ShapeScaled(key, modelNs))
    {
        return OpCost{*v, CostSource::ShapeScaled};
    }
    if (auto v = FromBytes(key, argFacts))
    {
        return OpCost{*v, CostSource::Bytes};
    }
    if (auto v = FamilyScaled(key))
    {
        return OpCost{*v, CostSource::Family};
    }
    if (auto v = Roofline(key))
    {
        return OpCost{*v, CostSource::Roofline};
    }
    return std::nullopt;
}

double OpEstimator::KernelFloorNs() const
{
    for (const Entry* e : m_kernelsByTime)
    {
        if (Visible(*e))
        {
            return e->second.medianNs;
        }
    }
    return 0;
}

std::optional<int64_t> OpEstimator::FromBytes(const OpKey& key, const std::string& argFacts) const
{
    if (key.kind != OpKind::Kernel || m_copyBytesPerSecond <= 0)
    {
        return std::nullopt;
    }
    const auto bytes = CopyKernelBytes(key.name, key.grid, argFacts);
    if (!bytes)
    {
        return std::nullopt;
    }
    return std::llround(KernelFloorNs() + static_cast<double>(*bytes) / m_copyBytesPerSecond * 1e9);
}

// How many times over \p threads fill the GPU (at least once): SMs x 2048 resident
// threads each (compute capability 8.0 and 9.0).  A launch smaller than the GPU runs its
// threads side by side, so a one-thread sample of a kernel and a half-GPU launch of it take
// about as long, where scaling by threads alone would multiply a 2.4 us sample into
// seconds.
double OpEstimator::Waves(double threads) const
{
    constexpr double kResidentThreadsPerSm = 2048;
    const double full = kResidentThreadsPerSm * std::max(m_gpu.smCount, 1);
    return std::max(threads / full, 1.0);
}

// Output tiles of kGemmTile x kGemmTile (the common cuBLAS CTA tile; its kernels choose
// others, but the count only has to say whether a GEMM fills the GPU and by how much).
double OpEstimator::GemmTiles(const GemmSignature& g)
{
    constexpr double kGemmTile = 128;
    return std::ceil(static_cast<double>(std::max<int64_t>(g.m, 1)) / kGemmTile) *
           std::ceil(static_cast<double>(std::max<int64_t>(g.n, 1)) / kGemmTile) *
           static_cast<double>(std::max<int64_t>(g.batch, 1));
}

// How many times over a GEMM's tiles, one CTA per SM, fill the GPU (at least once).
double OpEstimator::GemmWaves(const GemmSignature& g) const
{
    return std::max(GemmTiles(g) / std::max(m_gpu.smCount, 1), 1.0);
}

// Like ScaledKernel, over the other instantiations of the kernel's template.
std::optional<int64_t> OpEstimator::FamilyScaled(const OpKey& key) const
{
    if (key.kind != OpKind::Kernel)
    {
        return std::nullopt;
    }
    const auto [first, last] = m_families.equal_range(std::string(KernelBaseName(key.name)));
    const std::pair<const OpKey, profile::OpStats>* best = nullptr;
    double bestDist = std::numeric_limits<double>::infinity();
    for (auto it = first; it != last; ++it)
    {
        const auto* e = it->second;
        if (e->first.name == key.name || !Visible(*e))
        {
            continue; // the same kernel: ShapeScaled's case
        }
        // The same block size first (the same tiling), then the nearest thread count.
        const double d = LogRatio(key.Threads(), e->first.Threads()) +
                         (e->first.block == key.block ? 0.0 : 10.0);
        if (d < bestDist)
        {
            bestDist = d;
            best = e;
        }
    }
    if (!best)
    {
        return std::nullopt;
    }
    return std::llround(best->second.medianNs * Waves(key.Threads()) /
                        Waves(best->first.Threads()));
}

std::optional<int64_t> OpEstimator::ShapeScaled(const OpKey& key, int64_t modelNs) const
{
    if (!m_profile)
    {
        return std::nullopt;
    }
    switch (key.kind)
    {
    case OpKind::Kernel:
        return ScaledKernel(key);
    case OpKind::Gemm:
        return ScaledGemm(key);
    case OpKind::Cudnn:
        return ScaledCudnn(key);
    case OpKind::Memcpy:
    case OpKind::Memset:
        return ScaledCopy(key, modelNs);
    }
    return std::nullopt;
}

// The nearest launch shape by thread count, its time scaled by the waves of threads
// (Waves): a kernel that gives each thread a fixed share of the work takes time in
// proportion once the GPU is full, and about the same below that.
std::optional<int64_t> OpEstimator::ScaledKernel(const OpKey& key) const
{
    const auto same = m_profile->SameName(OpKind::Kernel, key.name);
    const std::pair<const OpKey, profile::OpStats>* best = nullptr;
    double bestDist = std::numeric_limits<double>::infinity();
    for (const auto* e : same)
    {
        if (e->first == key || !Visible(*e))
        {
            continue; // never the op itself: ShapeScaled of a measured op is its leave-one-out
        }
        const double d = LogRatio(key.Threads(), e->first.Threads());
        if (d < bestDist)
        {
            bestDist = d;
            best = e;
        }
    }
    if (!best)
    {
        return std::nullopt;
    }
    return std::llround(best->second.medianNs * Waves(key.Threads()) /
                        Waves(best->first.Threads()));
}

// The nearest measured GEMM of the same family (API, transposes, types, epilogue), else
// of the same data types, its time scaled by the flops; never faster than the roofline.
std::optional<int64_t> OpEstimator::ScaledGemm(const OpKey& key) const
{
    const auto g = GemmSignature::Parse(key.name);
    if (!g)
    {
        return std::nullopt;
    }
    const std::string family = g->Family();
    const GemmSignature* best = nullptr;
    std::optional<GemmSignature> bestSig;
    double bestNs = 0;
    double bestDist = std::numeric_limits<double>::infinity();
    for (const auto& entry : m_profile->Ops())
    {
        const auto& [k, stats] = entry;
        if (k.kind != OpKind::Gemm || k == key || !Visible(entry))
        {
            continue;
        }
        const auto other = GemmSignature::Parse(k.name);
        if (!other || other->a != g->a || other->b != g->b || other->c != g->c)
        {
            continue;
        }
        // Another family is a last resort: it counts as far away as a 1000x shape change.
        double d = other->Family() == family ? 0.0 : 3.0 * std::log(1000.0);
        d += LogRatio(static_cast<double>(g->m), static_cast<double>(other->m)) +
             LogRatio(static_cast<double>(g->n), static_cast<double>(other->n)) +
             LogRatio(static_cast<double>(g->k), static_cast<double>(other->k)) +
             LogRatio(static_cast<double>(g->batch), static_cast<double>(other->batch));
        if (d < bestDist)
        {
            bestDist = d;
            bestSig = other;
            bestNs = stats.OnStreamNs({}, true);
        }
    }
    if (!bestSig)
    {
        return std::nullopt;
    }
    best = &*bestSig;
    double t = bestNs * g->Flops() / std::max(best->Flops(), 1.0);
    if (GemmTiles(*best) < std::max(m_gpu.smCount, 1))
    {
        // The sample left SMs idle: its time is one pass of its tiles through the k loop,
        // and more tiles, up to one per SM, run beside them for free.  Scaled by its flops
        // it would charge the target the sample's low rate (a 4 us fp32 128x128x128 GEMM,
        // 1 TFLOP/s, made a 16x2048x2048 batch-16 one take 2.2 ms where the H100's
        // fp32 peak needs 32 us).  So: no more than the sample's time per pass of the k
        // loop, times the target's waves of tiles and its k loop's length.
        const double byWaves = bestNs * GemmWaves(*g) * static_cast<double>(g->k) /
                               static_cast<double>(std::max<int64_t>(best->k, 1));
        t = std::min(t, byWaves);
    }
    if (auto roof = Roofline(key))
    {
        t = std::max(t, static_cast<double>(*roof));
    }
    return std::llround(t);
}

// The nearest measured cuDNN op of the same API and data type, preferring its family
// (every field but the shape: layout, causal mask, epilogue...), its time scaled by the
// work (flops; bytes for normalisation); never faster than the roofline.
std::optional<int64_t> OpEstimator::ScaledCudnn(const OpKey& key) const
{
    const auto s = CudnnSignature::Parse(key.name);
    if (!s)
    {
        return std::nullopt;
    }
    const std::string family = s->Family();
    const std::vector<double> shape = s->Shape();
    std::optional<CudnnSignature> best;
    double bestNs = 0;
    double bestDist = std::numeric_limits<double>::infinity();
    for (const auto& entry : m_profile->Ops())
    {
        const auto& [k, stats] = entry;
        if (k.kind != OpKind::Cudnn || k == key || !Visible(entry))
        {
            continue;
        }
        auto other = CudnnSignature::Parse(k.name);
        if (!other || other->api != s->api || other->Type() != s->Type())
        {
            continue;
        }
        const std::vector<double> otherShape = other->Shape();
        if (otherShape.size() != shape.size())
        {
            continue; // another rank of convolution: nothing to scale by
        }
        // Another family is a last resort, as for GEMMs.
        double d = other->Family() == family ? 0.0 : 3.0 * std::log(1000.0);
        for (std::size_t i = 0; i < shape.size(); ++i)
        {
            d += LogRatio(shape[i], otherShape[i]);
        }
        if (d < bestDist)
        {
            bestDist = d;
            best = std::move(other);
            bestNs = stats.OnStreamNs({}, true);
        }
    }
    if (!best)
    {
        return std::nullopt;
    }
    double t = bestNs * CudnnWork(*s) / std::max(CudnnWork(*best), 1.0);
    if (auto roof = Roofline(key))
    {
        t = std::max(t, static_cast<double>(*roof));
    }
    return std::llround(t);
}

// Copies: linear between the two measured sizes around this one; past the largest, its
// time plus the extra bytes at the scenario's bandwidth (a small measured copy is mostly
// latency, so its own rate would make a large one far too slow); below the smallest,
// the smallest's time (latency).
std::optional<int64_t> OpEstimator::ScaledCopy(const OpKey& key, int64_t modelNs) const
{
    const auto same = m_profile->SameName(key.kind, key.name);
    const std::pair<const OpKey, profile::OpStats>*lo = nullptr, *hi = nullptr;
    for (const auto* e : same)
    {
        if (e->first == key || !Visible(*e))
            continue;
        if (e->first.bytes <= key.bytes && (!lo || e->first.bytes > lo->first.bytes))
            lo = e;
        if (e->first.bytes >= key.bytes && (!hi || e->first.bytes < hi->first.bytes))
            hi = e;
    }
    const double b = static_cast<double>(key.bytes);
    if (lo && hi)
    {
        if (hi->first.bytes == lo->first.bytes)
            return std::llround(lo->second.medianNs);
        const double f = (b - static_cast<double>(lo->first.bytes)) /
                         static_cast<double>(hi->first.bytes - lo->first.bytes);
        return std::llround(lo->second.medianNs + f * (hi->second.medianNs - lo->second.medianNs));
    }
    if (lo)
    {
        if (modelNs >= 0)
        {
            const double extra = static_cast<double>(modelNs) *
                                 (1.0 - static_cast<double>(lo->first.bytes) / std::max(b, 1.0));
            return std::llround(lo->second.medianNs + extra);
        }
        return std::llround(lo->second.medianNs * b / std::max(1.0, double(lo->first.bytes)));
    }
    if (hi)
        return std::llround(hi->second.medianNs);
    return std::nullopt;
}

std::optional<int64_t> OpEstimator::Roofline(const OpKey& key) const
{
    if (key.kind == OpKind::Cudnn)
    {
        return CudnnRoofline(key);
    }
    if (key.kind != OpKind::Gemm)
    {
        return std::nullopt;
    }
    const auto g = GemmSignature::Parse(key.name);
    if (!g)
    {
        return std::nullopt;
    }
    auto peak = m_gpu.peakTflops.find(g->a);
    if (peak == m_gpu.peakTflops.end() || peak->second <= 0)
    {
        return std::nullopt;
    }
    const double computeNs = g->Flops() / (peak->second * 1e12) * 1e9;
    const double memoryNs =
        m_gpu.hbmBitsPerSecond > 0 ? g->Bytes() * 8.0 / m_gpu.hbmBitsPerSecond * 1e9 : 0.0;
    return std::llround(std::max(computeNs, memoryNs));
}

// Attention and convolutions: their flops at the GPU's peak for the operand type (the
// tensor cores' rate: cuDNN's kernels use them), or their bytes at the HBM bandwidth,
// whichever takes longer; batch norm by its bytes alone.
std::optional<int64_t> OpEstimator::CudnnRoofline(const OpKey& key) const
{
    const auto s = CudnnSignature::Parse(key.name);
    if (!s)
    {
        return std::nullopt;
    }
    double computeNs = 0;
    if (s->Flops() > 0)
    {
        auto peak = m_gpu.peakTflops.find(s->Type());
        if (peak == m_gpu.peakTflops.end() || peak->second <= 0)
        {
            return std::nullopt;
        }
        computeNs = s->Flops() / (peak->second * 1e12) * 1e9;
    }
    const double memoryNs =
        m_gpu.hbmBitsPerSecond > 0 ? s->Bytes() * 8.0 / m_gpu.hbmBitsPerSecond * 1e9 : 0.0;
    if (computeNs <= 0 && memoryNs <= 0)
    {
        return std::nullopt;
    }
    return std::llround(std::max(computeNs, memoryNs));
}

} // namespace phantora
