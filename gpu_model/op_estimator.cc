#include "op_estimator.h"

#include "attention_work.h"
#include "copy_kernel_bytes.h"
#include "gpu_model/profile/cudnn_signature.h"
#include "gpu_model/profile/gemm_signature.h"
#include "gpu_model/profile/program_name.h"
#include "kernel_traffic.h"
#include "launch_facts.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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

/// The alignment of a GEMM's leading dimensions in elements (8, 4, 2 or 1): column-major
/// lda = m (A not transposed) or k, ldb = k or n, ldc = m.  cuBLAS gives Hopper's TMA
/// kernels only 16-byte-aligned strides (8 bf16 elements); below that it runs slower
/// kernels, the slower the fewer bytes the strides share (the zoo's GPT-2 head over a
/// vocabulary of 50257, alignment 1, ran at 96 TFLOP/s on an H200, BERT's 30522,
/// alignment 2, at 237, aligned GEMMs of their size at 740).
int64_t LeadingAlignment(const GemmSignature& g)
{
    const int64_t lda = g.opA == 'N' ? g.m : g.k;
    const int64_t ldb = g.opB == 'N' ? g.k : g.n;
    int64_t align = 8;
    for (const int64_t ld : {lda, ldb, g.m})
        while (align > 1 && ld % align != 0)
            align /= 2;
    return align;
}

/// How many measurements, the nearest in bytes, each bandwidth line is fitted to: the
/// fewest whose line the leave-one-out errors of elementwise kernels and optimizers
/// no longer improve on (2 and 3 interpolate noise, 6 to 12 are alike).
constexpr std::size_t kCurveNeighbours = 6;

/// What a cuDNN op's time scales with: its flops, or for memory-bound normalisation its
/// bytes.
double CudnnWork(const CudnnSignature& s)
{
    return s.Class() == CudnnOpClass::Normalization ? s.Bytes() : s.Flops();
}
} // namespace

// What the hardware moves at most for a copy: the link for host copies (pageable ones
// reach a fifth of it: this only bounds), HBM for device ones (a DtoD copy reads and
// writes each byte).
double OpEstimator::PeakCopyBytesPerSecond(const OpKey& key) const
{
    if (key.kind == OpKind::Memset)
        return m_gpu.hbmBitsPerSecond / 8;
    if (key.name == "HtoD" || key.name == "DtoH")
        return m_gpu.pcieBitsPerSecond / 8;
    if (key.name == "DtoD")
        return m_gpu.hbmBitsPerSecond / 16;
    return 0;
}

void OpEstimator::AddBytesPoints(const Entry& entry)
{
    const auto& [key, stats] = entry;
    if (key.kind == OpKind::Memcpy || key.kind == OpKind::Memset)
    {
        // Host copies by population: the replay tool's, from pinned memory, and the
        // programs' own, mostly pageable (4-8x slower at 2 MB and more on an H200).
        auto curve = [&](bool pinned) -> BandwidthCurve&
        {
            return m_copies
                .try_emplace(CopyCurveKey{key.kind, key.name, pinned}, kCurveNeighbours,
                             PeakCopyBytesPerSecond(key))
                .first->second;
        };
        const bool host = key.name == "HtoD" || key.name == "DtoH";
        if (!host || stats.medianByProgramNs.empty())
        {
            curve(host && stats.source == "replay")
                .Add(static_cast<double>(key.bytes), stats.medianNs, &entry);
        }
        else
        {
            for (const auto& [program, median] : stats.medianByProgramNs)
            {
                curve(program == profile::kReplayProgram)
                    .Add(static_cast<double>(key.bytes), median, &entry);
            }
        }
    }
    if (key.kind == OpKind::Memcpy && key.name == "DtoD")
    {
        // read and written: twice its size through the memory
        m_kernelBytes.Add(2.0 * static_cast<double>(key.bytes), stats.medianNs, &entry);
        return;
    }
    if (key.kind == OpKind::Memset)
    {
        m_kernelBytes.Add(static_cast<double>(key.bytes), stats.medianNs, &entry);
        return;
    }
    if (key.kind != OpKind::Kernel)
        return;
    auto add = [&](const std::string& args, double median)
    {
        if (auto t = TrafficOf(key, args); t && t->exact)
            (t->access == Access::Strided    ? m_stridedBytes
             : t->access == Access::Unrolled ? m_unrolledBytes
                                             : m_kernelBytes)
                .Add(WaveBytes(key, t->bytes), median, &entry);
    };
    if (stats.medianByArgsNs.empty())
    {
        add({}, stats.medianNs);
        return;
    }
    for (const auto& [args, median] : stats.medianByArgsNs)
    {
        add(args, median);
    }
}

// A measured GEMM on the time-against-flops line of its operand type, which prices the
// implicit GEMMs of convolutions (ConvolutionNs): near a size a GEMM takes a fixed cost
// plus its flops at a rate, as a copy takes a latency plus its bytes at a bandwidth, and
// the line through the nearest measured GEMMs in flops carries both.
void OpEstimator::AddGemmPoint(const Entry& entry)
{
    const auto g = GemmSignature::Parse(entry.first.name);
    if (!g || g->a != g->b)
        return;
    const auto peak = m_gpu.peakTflops.find(g->a);
    const double peakFlopsPerSecond =
        peak != m_gpu.peakTflops.end() && peak->second > 0 ? peak->second * 1e12 : 0.0;
    m_gemmFlops.try_emplace(g->a, kCurveNeighbours, peakFlopsPerSecond)
        .first->second.Add(g->Flops(), entry.second.OnStreamNs({}, true), &entry);
}

OpEstimator::OpEstimator(const profile::ProfileReader* profile, const GpuSpec& gpu, Hidden hidden)
    : m_profile(profile), m_gpu(gpu), m_hidden(std::move(hidden)),
      m_kernelBytes(kCurveNeighbours, gpu.hbmBitsPerSecond / 8),
      m_unrolledBytes(kCurveNeighbours, gpu.hbmBitsPerSecond / 8),
      m_stridedBytes(kCurveNeighbours, gpu.hbmBitsPerSecond / 8)
{
    if (!m_profile)
    {
        return;
    }
    for (const auto& entry : m_profile->Ops())
    {
        const auto& [key, stats] = entry;
        if (key.kind == OpKind::Kernel)
        {
            m_families.emplace(std::string(KernelBaseName(key.name)), &entry);
        }
        if (key.kind == OpKind::Gemm)
        {
            AddGemmPoint(entry);
        }
        AddBytesPoints(entry);
    }
}

std::optional<OpCost> OpEstimator::Estimate(const OpKey& key, std::string_view argFacts,
                                            std::string_view workFacts) const
{
    const auto first = Chain(key, argFacts, workFacts, true);
    if (first.empty())
    {
        return std::nullopt;
    }
    return first.front();
}

std::vector<OpCost> OpEstimator::Candidates(const OpKey& key, std::string_view argFacts,
                                            std::string_view workFacts) const
{
    return Chain(key, argFacts, workFacts, false);
}

// The order, best first by the leave-one-out errors of phantora-estimator-accuracy
// (gpu_model/README.md has the figures):
//   a kernel whose bytes its arguments say but its grid does not (norms, softmax, copy
//     kernels, foreach launches whose elements the interposer read): the same kernel at
//     the size nearest in bytes, scaled along the bandwidth curve (ScaledByBytes);
//   the same op at other shapes (ShapeScaled), but for a foreach launch known only by its
//     grid: its threads say its chunks, and a chunk may hold 65536 elements or 100;
//   its bytes at the bandwidth the profile measured for such bytes (FromBytes);
//   another instantiation of its template (FamilyScaled);
//   a GEMM's or cuDNN op's roofline.
std::vector<OpCost> OpEstimator::Chain(const OpKey& key, std::string_view argFacts,
                                       std::string_view workFacts, bool firstOnly) const
{
    std::vector<OpCost> out;
    auto done = [&] { return firstOnly && !out.empty(); };
    const auto traffic =
        key.kind == OpKind::Kernel ? TrafficOf(key, argFacts, workFacts) : std::nullopt;
    const bool foreachByGrid = traffic && !traffic->exact;
    if (traffic && traffic->exact && !traffic->followsGrid)
    {
        if (auto v = ScaledByBytes(key, *traffic))
            out.push_back({*v, CostSource::ShapeScaled});
    }
    if (!foreachByGrid && !done())
    {
        if (auto v = ShapeScaled(key, workFacts))
            out.push_back({*v, CostSource::ShapeScaled});
    }
    if (traffic && !done())
    {
        if (auto v = BytesTimeNs(key, *traffic))
            out.push_back({std::llround(*v), CostSource::Bytes});
    }
    if (!done())
    {
        if (auto v = FamilyScaled(key))
            out.push_back({*v, CostSource::Family});
    }
    if (!done())
    {
        if (auto v = Roofline(key))
            out.push_back({*v, CostSource::Roofline});
    }
    return out;
}

std::optional<int64_t> OpEstimator::FromBytes(const OpKey& key, std::string_view argFacts,
                                              std::string_view workFacts) const
{
    if (key.kind != OpKind::Kernel)
    {
        return std::nullopt;
    }
    const auto traffic = TrafficOf(key, argFacts, workFacts);
    if (!traffic)
    {
        return std::nullopt;
    }
    const auto ns = BytesTimeNs(key, *traffic);
    if (!ns)
    {
        return std::nullopt;
    }
    return std::llround(*ns);
}

// A block keeps only so many loads in flight, so it moves its bytes at about its SM's
// share of the GPU's bandwidth however few blocks run: a launch of fewer blocks than SMs
// takes what its blocks' bytes would take were there one on every SM.  Foreach ops hand
// each block a chunk of 65536 elements (512 KiB of float in and out): a 4-block launch
// of them took 17-19 us on an H200 (data/raw/profiles/H200/zoo-2026-12-01T2154), what
// 132 chunks take at the GPU's bandwidth, not the 1-2 us its own 2 MiB would.
double OpEstimator::WaveBytes(const OpKey& key, double bytes) const
{
    const double blocks = static_cast<double>(key.grid[0]) * key.grid[1] * key.grid[2];
    const double sms = std::max(m_gpu.smCount, 1);
    if (blocks <= 0 || key.kind != OpKind::Kernel)
        return bytes;
    return bytes * std::max(1.0, sms / blocks);
}

std::optional<double> OpEstimator::BytesTimeNs(const OpKey& key, const KernelTraffic& t) const
{
    const double bytes = WaveBytes(key, t.bytes);
    std::optional<double> ns;
    if (t.access == Access::Strided)
        ns = m_stridedBytes.TimeNs(bytes, m_hidden);
    if (t.access == Access::Unrolled)
        ns = m_unrolledBytes.TimeNs(bytes, m_hidden);
    if (!ns)
        ns = m_kernelBytes.TimeNs(bytes, m_hidden);
    return ns;
}

// The same kernel measured at the size nearest in bytes, its time scaled as the bandwidth
// curve scales between the two sizes: what the kernel does beyond moving its bytes (a
// reduction across a row, an optimizer's arithmetic, a strided walk) costs it the same
// share of its time at a nearby size.
std::optional<int64_t> OpEstimator::ScaledByBytes(const OpKey& key,
                                                  const KernelTraffic& target) const
{
    if (!m_profile)
        return std::nullopt;
    const auto targetNs = BytesTimeNs(key, target);
    if (!targetNs)
        return std::nullopt;
    const double targetBytes = WaveBytes(key, target.bytes);
    double bestDist = std::numeric_limits<double>::infinity();
    std::optional<double> best;
    for (const auto* e : m_profile->SameName(OpKind::Kernel, key.name))
    {
        if (e->first == key || !Visible(*e))
            continue;
        auto consider = [&](std::string_view args, double median)
        {
            const auto t = TrafficOf(e->first, args);
            if (!t || !t->exact)
                return;
            const double b = WaveBytes(e->first, t->bytes);
            const double d = LogRatio(b, targetBytes);
            const auto ns = BytesTimeNs(e->first, *t);
            if (d < bestDist && ns && *ns > 0)
            {
                bestDist = d;
                best = median * *targetNs / *ns;
            }
        };
        if (e->second.medianByArgsNs.empty())
            consider({}, e->second.medianNs);
        for (const auto& [args, median] : e->second.medianByArgsNs)
            consider(args, median);
    }
    if (!best)
        return std::nullopt;
    return std::llround(*best);
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

std::optional<int64_t> OpEstimator::ShapeScaled(const OpKey& key, std::string_view workFacts) const
{
    const bool pinned = LaunchFact(workFacts, "pinned").value_or(0) == 1;
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
        return ScaledCopy(key, pinned);
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
        // Another family is a last resort: it counts as far away as a 1000x shape change;
        // so does another alignment of the leading dimensions (another kind of kernel).
        double d = other->Family() == family ? 0.0 : 3.0 * std::log(1000.0);
        if (LeadingAlignment(*other) != LeadingAlignment(*g))
            d += 3.0 * std::log(1000.0);
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
    if (s->Class() == CudnnOpClass::Convolution)
    {
        return ScaledSmallChannelConvolution(key, *s);
    }
    if (const auto ns = AttentionNs(key, *s))
    {
        const auto roof = Roofline(key);
        return std::llround(std::max(*ns, roof ? static_cast<double>(*roof) : 0.0));
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
    if (s->Class() == CudnnOpClass::Normalization)
    {
        // Along the bandwidth curve with the channels as blocks (BatchNormBytesNs), not in
        // proportion to the bytes: the nearest recorded batch norm may have few channels
        // and run at half the rate of the target's (a 64-channel 56x56 layer scaled by
        // bytes to a 256-channel one came out at 3.3x the zoo's measured time).
        const auto targetNs = BatchNormBytesNs(key, *s);
        OpKey bestKey;
        bestKey.kind = OpKind::Cudnn;
        bestKey.name = best->Name();
        const auto bestModelNs = BatchNormBytesNs(bestKey, *best);
        if (targetNs && bestModelNs && *bestModelNs > 0)
            t = bestNs * *targetNs / *bestModelNs;
    }
    if (auto roof = Roofline(key))
    {
        t = std::max(t, static_cast<double>(*roof));
    }
    return std::llround(t);
}

// Copies and memsets: the line (a latency plus the bytes at a bandwidth) through the
// measured copies of the same direction at the nearest sizes (bandwidth_curve.h).  A small
// copy is mostly latency and a large one mostly bandwidth, and the line carries both:
// scaling the nearest measurement by the bytes instead charges a large copy a small one's
// latency for every byte (a 2.6 ms estimate for a 23 MB HtoD copy, scaled from 1 MB).
// Past the largest measured size the largest ones' line carries on; never faster than
// the link or memory allows.
std::optional<int64_t> OpEstimator::ScaledCopy(const OpKey& key, bool pinned) const
{
    const auto hidden = [&](const Entry& e) { return e.first == key || !Visible(e); };
    // A host copy from the measured copies of its population, else of the other.
    for (const bool population : {pinned, !pinned})
    {
        const auto it = m_copies.find(CopyCurveKey{key.kind, key.name, population});
        if (it == m_copies.end())
        {
            continue;
        }
        if (const auto ns = it->second.TimeNs(static_cast<double>(key.bytes), hidden))
        {
            return std::llround(*ns);
        }
    }
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
    if (const auto conv = ConvolutionWork::Of(*s))
    {
        if (const auto ns = ConvolutionNs(key, *conv, true))
            return std::llround(*ns);
    }
    if (const auto ns = BatchNormBytesNs(key, *s))
        return std::llround(*ns);
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

// A convolution's work on what the profile measured.  Its implicit GEMM's tensor-core
// flops (convolution_work.h) take what the profile's GEMMs of that type and as many flops
// took (the line through the nearest: a small GEMM's fixed cost, a large one's rate), or
// for a depthwise convolution, which has no GEMM for tensor cores, its flops at the CUDA
// cores' f32 peak; its bytes take what the measured copies and kernels that moved as
// many took (m_kernelBytes); the longer of the two, as the op overlaps them.  Neither
// floor is ever faster than the GPU's peaks (the curves' own bound).
std::optional<double> OpEstimator::ConvolutionNs(const OpKey& key, const ConvolutionWork& c,
                                                 bool withCallCost) const
{
    const auto hidden = [&](const Entry& e) { return e.first == key || !Visible(e); };
    std::optional<double> computeNs;
    if (c.Depthwise())
    {
        const auto peak = m_gpu.peakTflops.find("f32");
        if (peak != m_gpu.peakTflops.end() && peak->second > 0)
            computeNs = c.Flops() / (peak->second * 1e12) * 1e9;
    }
    else if (const auto curve = m_gemmFlops.find(c.GemmType()); curve != m_gemmFlops.end())
    {
        if (const auto ns = curve->second.TimeNs(c.TensorCoreFlops(), hidden))
            computeNs = *ns * c.GemmTimeScale() / c.TileEfficiency(m_gpu.smCount);
    }
    if (!computeNs)
    {
        // no measured GEMM of its type: the tensor cores' peak
        const auto peak = m_gpu.peakTflops.find(c.GemmType());
        if (peak == m_gpu.peakTflops.end() || peak->second <= 0)
            return std::nullopt;
        computeNs = c.TensorCoreFlops() / (peak->second * 1e12) * 1e9 * c.GemmTimeScale() /
                    c.TileEfficiency(m_gpu.smCount);
    }
    auto memoryNs = m_kernelBytes.TimeNs(c.Bytes(), hidden);
    if (!memoryNs && m_gpu.hbmBitsPerSecond > 0)
        memoryNs = c.Bytes() * 8.0 / m_gpu.hbmBitsPerSecond * 1e9;
    double ns = std::max(*computeNs, memoryNs.value_or(0.0));
    if (withCallCost)
        ns += ConvolutionCallNs(key, c);
    return ns;
}

// Convolutions are priced by their work (ConvolutionNs), not by another recorded shape
// scaled by its flops: that carries the recorded shape's efficiency to the target, and a
// batch-32 ResNet layer runs at a quarter of the rate a batch-128 one reaches (the zoo's
// ResNet-50 convolutions came out at 4x their measured time that way).  But for a
// convolution of too few input channels for the tensor cores' operand vectors (a first
// layer's 3 colours: ConvolutionWork::SmallChannels), whose path through cuDNN its work
// does not describe: the profile's recorded small-channel convolution of the same pass
// (the same data type first, then layout, then the nearest shape), scaled by the flops.
// H200: ResNet's 7x7 stride-2 stem at batch 32 ran at 26 TFLOP/s in bf16, and ViT-B/16's
// 16x16 stride-16 patch embedding at batch 64 at 26 as well.
std::optional<int64_t> OpEstimator::ScaledSmallChannelConvolution(const OpKey& key,
                                                                  const CudnnSignature& s) const
{
    const auto target = ConvolutionWork::Of(s);
    if (!target || !target->SmallChannels())
        return std::nullopt;
    const std::vector<double> shape = s.Shape();
    std::optional<ConvolutionWork> best;
    double bestNs = 0;
    double bestDist = std::numeric_limits<double>::infinity();
    for (const auto& entry : m_profile->Ops())
    {
        const auto& [k, stats] = entry;
        if (k.kind != OpKind::Cudnn || k == key || !Visible(entry))
            continue;
        const auto other = CudnnSignature::Parse(k.name);
        const auto c = other && other->api == s.api ? ConvolutionWork::Of(*other) : std::nullopt;
        if (!c || !c->SmallChannels())
            continue;
        const std::vector<double> otherShape = other->Shape();
        if (otherShape.size() != shape.size())
            continue;
        double d = (c->type == target->type ? 0.0 : 100.0) +
                   (c->channelsLast == target->channelsLast ? 0.0 : 10.0);
        for (std::size_t i = 0; i < shape.size(); ++i)
            d += LogRatio(shape[i], otherShape[i]);
        if (d < bestDist)
        {
            bestDist = d;
            best = c;
            bestNs = stats.OnStreamNs({}, true);
        }
    }
    if (!best)
        return std::nullopt;
    double t = bestNs * target->Flops() / std::max(best->Flops(), 1.0);
    if (auto roof = Roofline(key))
        t = std::max(t, static_cast<double>(*roof));
    return std::llround(t);
}

// Batch norm's passes over its input (CudnnSignature::Bytes) at the bandwidth the profile
// measured for as many bytes (m_kernelBytes), not the HBM's peak: the profile's own
// batch norms moved theirs at 0.9-3.5 TB/s on an H200 whose copies reach 4.2.  cuDNN's
// spatial batch norm reduces each channel in its own blocks, so a layer of fewer
// channels than SMs leaves SMs idle, each block moving its bytes at about one SM's share
// of the bandwidth (WaveBytes' reasoning, with the channels as the blocks): 64 channels
// reach half the rate 132 do.
std::optional<double> OpEstimator::BatchNormBytesNs(const OpKey& key, const CudnnSignature& s) const
{
    if (s.Class() != CudnnOpClass::Normalization)
        return std::nullopt;
    const auto x = s.Dims("x");
    if (x.size() < 2 || x[1] <= 0)
        return std::nullopt;
    const double channels = static_cast<double>(x[1]);
    const double bytes = s.Bytes() * std::max(1.0, std::max(m_gpu.smCount, 1) / channels);
    const auto hidden = [&](const Entry& e) { return e.first == key || !Visible(e); };
    return m_kernelBytes.TimeNs(bytes, hidden);
}

// What a cuDNN convolution takes beyond its implicit GEMM and its bytes: the engine's other
// kernels (an NCHW layout's transposes as kernels of their own, split-K reductions of
// backward-filter passes, the zeroing of a strided backward-data pass's gaps) and the
// call's span between its kernels.  Not derived from the signature: measured, as the
// median over the profile's recorded convolutions of the same pass, data type and layout
// of their time beyond their work (else of the same pass; 0 with none).  H200, train_cnn:
// bf16 NHWC 0-2 us a call, f32 NCHW 21-37 us (gpu_model/README.md).
double OpEstimator::ConvolutionCallNs(const OpKey& key, const ConvolutionWork& target) const
{
    if (!m_profile)
        return 0;
    std::vector<double> same, samePass;
    for (const auto& entry : m_profile->Ops())
    {
        const auto& [k, stats] = entry;
        if (k.kind != OpKind::Cudnn || k == key || !Visible(entry))
            continue;
        const auto s = CudnnSignature::Parse(k.name);
        const auto c = s ? ConvolutionWork::Of(*s) : std::nullopt;
        if (!c || c->pass != target.pass || c->SmallChannels() || c->Depthwise())
            continue;
        const auto work = ConvolutionNs(key, *c, false);
        if (!work)
            continue;
        const double beyond = stats.OnStreamNs({}, true) - *work;
        samePass.push_back(beyond);
        if (c->type == target.type && c->channelsLast == target.channelsLast)
            same.push_back(beyond);
    }
    auto& v = same.empty() ? samePass : same;
    if (v.empty())
        return 0;
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return std::max(0.0, *mid);
}

} // namespace phantora

namespace phantora
{

// Attention by its work (attention_work.h): the time model of the pass fitted to the
// visible measured attention calls of the same pass and type group (bf16 and f16 alike),
// where there are enough of them; else ScaledCudnn's nearest call scaled by flops.
std::optional<double> OpEstimator::AttentionNs(const OpKey& key, const CudnnSignature& s) const
{
    const auto target = AttentionWork::Of(s);
    if (!target || !m_profile)
        return std::nullopt;
    std::vector<AttentionTimeModel::Point> points;
    for (const auto& entry : m_profile->Ops())
    {
        const auto& [k, stats] = entry;
        if (k.kind != OpKind::Cudnn || k == key || !Visible(entry))
            continue;
        const auto other = CudnnSignature::Parse(k.name);
        const auto w = other ? AttentionWork::Of(*other) : std::nullopt;
        if (w && w->SameModel(*target))
            points.push_back({*w, stats.OnStreamNs({}, true)});
    }
    const auto model = AttentionTimeModel::Fit(points);
    if (!model)
        return std::nullopt;
    return model->TimeNs(*target);
}

} // namespace phantora
