// A GPU nobody measured, predicted from the profile of one that was measured: each op's
// time on the measured ("source") GPU, as the profile or an estimate from it gives it, is
// scaled to the scenario's ("target") GPU by the resource that bounds it, both GPUs
// described by datasheet figures (gpu_spec.h):
//   latency  the part of an op below the source GPU's kernel floor (the shortest time its
//            kernels take: launch, ramp-up, drain) scales by the SM clock;
//   compute  GEMMs, convolutions and attention whose flops at the source's tensor peak
//            take longer than their bytes at its HBM bandwidth: by the tensor rate per SM
//            and the waves of 128x128 tiles on each GPU's SMs;
//   memory   kernels whose launch says their bytes (kernel_traffic.h), batch norm, GEMMs
//            and cuDNN ops on the memory side of the roofline, device copies and memsets:
//            by HBM bandwidth; a kernel whose bytes are not known is memory-bound unless
//            its name says attention or a matrix product (PyTorch's kernels outside
//            cuBLAS and cuDNN are mostly one pass over memory);
//   issue    a kernel whose bytes at the source's HBM peak take under a tenth of its time
//            beyond the floor is limited by its SMs' issue, not the memory: by the clock;
//   link     host copies by the PCIe figure (collectives and peer traffic are the
//            network's: the scenario's [topology] carries the target's NVLink).
// The class is decided from the op's measured (or estimated) source time against the
// source GPU's roofline; constants come only from the datasheets and the source profile.
#pragma once

#include "gpu_model/gpu_spec.h"
#include "gpu_model/profile/op_key.h"
#include "gpu_model/profile/profile_reader.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace phantora
{

enum class PredictedClass : uint8_t
{
    Compute,  ///< tensor throughput and waves
    Memory,   ///< HBM bandwidth
    Latency,  ///< mostly the kernel floor: the clock
    Issue,    ///< moves too little for its time: the clock
    HostLink, ///< host copies: PCIe
    Unscaled, ///< nothing to scale by (host-to-host copies, figures missing)
};
inline constexpr std::size_t kPredictedClasses = 6;
const char* PredictedClassName(PredictedClass c);

struct PredictedCost
{
    double ns{0};
    PredictedClass cls{PredictedClass::Unscaled};
};

class GpuPrediction
{
public:
    /// \p latencyFloorNs: the source GPU's kernel floor (LatencyFloorNs of its profile).
    /// Throws std::invalid_argument naming a figure the prediction needs and a datasheet
    /// lacks (the HBM bandwidth, the bf16 peak, the SM count).
    GpuPrediction(const GpuSpec& source, const GpuSpec& target, double latencyFloorNs);

    /// The 10th percentile of the profile's measured kernels' medians: below it a kernel's
    /// time is the GPU's fixed cost of running one, not its work.
    static double LatencyFloorNs(const profile::ProfileReader& profile);

    /// \p sourceNs: \p key's time on the source GPU; \p argFacts, \p workFacts: its launch
    /// facts (kernel_traffic.h).
    PredictedCost Scale(const profile::OpKey& key, double sourceNs, std::string_view argFacts = {},
                        std::string_view workFacts = {}) const;

    const GpuSpec& Source() const { return m_source; }
    const GpuSpec& Target() const { return m_target; }
    double LatencyFloor() const { return m_floorNs; }
    /// Time factors (target time per source time) of each resource.
    double ClockFactor() const;
    double MemoryFactor() const;
    /// A tensor-core op of \p tiles 128x128 output tiles (0: unknown, the whole GPU's
    /// rate) on operands of \p type.
    double ComputeFactor(double tiles, const std::string& type) const;

private:
    struct Work
    {
        PredictedClass cls;
        double factor;
    };
    /// The class and factor of \p key's time beyond the floor, \p workNs of it.
    Work WorkOf(const profile::OpKey& key, double workNs, std::string_view argFacts,
                std::string_view workFacts) const;
    /// Compute or memory, by which side of the source's roofline the op is on.
    Work Roofline(double flops, double bytes, double tiles, const std::string& type) const;
    double Peak(const GpuSpec& gpu, const std::string& type) const;

    const GpuSpec& m_source;
    const GpuSpec& m_target;
    double m_floorNs;
};

} // namespace phantora
