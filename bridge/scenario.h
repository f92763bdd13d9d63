// A cluster description as the user wrote it, validated.  Loaded once by
// phantora-cluster and shared (read-only) by the timeline, the network and the
// reports.
#pragma once

#include "ns3/nccl-config.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

namespace phantora
{

/// A scenario file that cannot be used; what() names the file, the line when known,
/// the key and what was expected.
class ScenarioError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

struct GpuSpec
{
    std::string model{"H200"};
    uint64_t memoryBytes{0};
    int32_t smCount{132};
    int32_t ccMajor{9};
    int32_t ccMinor{0};
    int64_t launchLatencyNs{0};  ///< from enqueue to the earliest start on the GPU
    double hbmBitsPerSecond{0};  ///< device-to-device copies and memsets
    double pcieBitsPerSecond{0}; ///< host<->device copies
};

struct CpuSpec
{
    double timeScale{1.0};     ///< simulated CPU ns per ns of the rank's thread CPU time
    int64_t callOverheadNs{0}; ///< charged to the rank's clock per intercepted CUDA/NCCL call
};

struct TopologySpec
{
    std::string kind{"switch"}; ///< "switch": every GPU has one link to one switch
    uint32_t gpus{0};
    uint32_t gpusPerNode{0}; ///< GPUs a rank sees as its node's devices (LOCAL_RANK range)
    double linkBitsPerSecond{0};
    double linkLatencyNs{0};
    std::string linkKind{"nvlink"};
};

struct NetworkSpec
{
    std::string transport{"packet"}; ///< "packet" or "flow"
    uint32_t mtu{4096};
    uint32_t headerBytes{48};
};

struct KernelSpec
{
    int64_t defaultNs{0};
    std::map<std::string, int64_t> durationsNs; ///< by kernel name (as demangled, arguments off)
};

struct Scenario
{
    std::filesystem::path file;
    std::string name;
    GpuSpec gpu;
    CpuSpec cpu;
    TopologySpec topology;
    NetworkSpec network;
    KernelSpec kernels;
    ns3::NcclConfig nccl; ///< the [nccl] table; NCCL's own orders of magnitude when absent
};

/// Reads and validates \p file; throws ScenarioError.
Scenario LoadScenario(const std::filesystem::path& file);

} // namespace phantora
