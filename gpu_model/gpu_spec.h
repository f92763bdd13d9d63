// What the GPU model needs to know of one GPU and of its ops' durations, as a scenario's
// [gpu] and [kernels] tables give them (bridge/scenario_loader.h reads them; the GPU model
// never sees the scenario file).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phantora
{

struct GpuSpec
{
    std::string model{"H200"};
    uint64_t memoryBytes{0};
    int32_t smCount{132};
    int32_t ccMajor{9};
    int32_t ccMinor{0};
    int64_t launchLatencyNs{0}; ///< from enqueue to the earliest start on the GPU
    /// How long a stream idles after each op before the next one queued on it starts
    /// (device_timeline.h); 0 in code, the shipped Hopper scenarios set the measured value.
    int64_t streamGapNs{0};
    /// Added to it while two or more of the GPU's other streams are blocked on events.
    int64_t streamGapBesideBlockedNs{0};
    /// How long a stream idles after each node of a replayed CUDA graph before the next
    /// node on it starts: the graph's per-node cost on the GPU, in place of the stream gap
    /// (a graph launch's host and launch cost is paid once, for the whole graph).  The
    /// scenario's `graph_node_gap`; unset, the stream gap.  The shipped Hopper scenarios
    /// set 0.20 us, measured on an H200 (scenarios/README.md).
    int64_t graphNodeGapNs{0};
    /// NCCL's CTAs share the SMs with compute kernels (sm_sharing.h); false: collectives
    /// and kernels never slow each other.
    bool commInterference{true};
    /// A collective's speed beside kernels that keep the GPU's memory busy, as a share of
    /// its speed alone (hbm_share.h); 1: memory sharing does not slow collectives.
    /// Measured: all-reduces beside fp32 adds on 2 x H100 took x2.15-2.62, median x2.26.
    double commRateBesideMemoryBound{1.0 / 2.26};
    double hbmBitsPerSecond{0};  ///< device-to-device copies and memsets
    double pcieBitsPerSecond{0}; ///< host<->device copies
    /// Dense peak TFLOP/s by GEMM input type ("bf16", "f16", "f32", "e4m3", ...): the
    /// roofline estimate of GEMMs the profile has not measured; absent: no roofline.
    /// "tf32": the tensor cores' rate on f32 operands (f32 is the CUDA cores').
    std::map<std::string, double> peakTflops;

    // Datasheet figures a predicted GPU is scaled by (gpu_prediction.h); 0: not given.
    int32_t smClockMhz{0};         ///< boost clock: latency-bound kernels scale by it
    uint64_t l2Bytes{0};           ///< reported, not used to scale (yet)
    int32_t nvlinkGeneration{0};   ///< 4 on Hopper, 5 on Blackwell
    double nvlinkBitsPerSecond{0}; ///< per GPU and direction, all its links: peer copies
};

struct KernelSpec
{
    int64_t defaultNs{0};
    std::map<std::string, int64_t> durationsNs; ///< by kernel name (as demangled, arguments off)
    std::filesystem::path profile;              ///< measured profile (gpu_profiler); empty: none
    /// Profiles searched before \ref profile, in order (phantora-cluster --profile).
    std::vector<std::filesystem::path> extraProfiles;
    /// [kernels] profile_of: the datasheet of the measured GPU whose profile stands in for
    /// the scenario's [gpu], which is then predicted from it (gpu_prediction.h); unset:
    /// the profile was measured on the scenario's GPU itself.
    std::optional<GpuSpec> profileOf;
    std::filesystem::path profileOfFile; ///< where that datasheet was read from
};

} // namespace phantora
