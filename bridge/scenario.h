// A cluster description as the user wrote it, validated.  Loaded once by
// phantora-cluster (scenario_loader.h) and shared (read-only) by the timeline, the
// network and the reports.
#pragma once

#include "gpu_model/gpu_spec.h"
#include "host_time/readback_table.h"
#include "nccl/config.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace phantora
{

/// A scenario file that cannot be used; what() names the file, the line when known,
/// the key and what was expected.
class ScenarioError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

enum class HostTimeMode : uint8_t
{
    Recorded, ///< the program's recording, else the model
    Model,    ///< the model, even for a recorded program
    Measured, ///< this machine's CPU time, scaled (local_scale)
};

struct CpuSpec
{
    double timeScale{1.0}; ///< simulated CPU ns per ns of the rank's thread CPU time
    /// Host time a real runtime spends in a call that submits GPU work (a kernel launch,
    /// GEMM, copy, memset or NCCL operation), charged to the rank's clock per such call.
    int64_t callOverheadNs{0};
    /// Host time of every other intercepted call (device, error and capture queries,
    /// event records, stream waits): tens of nanoseconds on a real GPU, but PyTorch
    /// makes ~15 of them per GPU op.
    int64_t queryOverheadNs{0};
    /// This machine's CPU ns -> the recording host's, for host time the profile does not
    /// hold; unset: measured at start-up (host_time_profile.h).
    std::optional<double> localScale;
    /// Where the host time between a program's GPU calls comes from ([cpu] host_time):
    /// the program's recording in the profile, else the host-time model learned from every
    /// recorded program (host_time/host_time_model.h); always the model; or this
    /// machine's CPU time (the only choice that depends on the simulating machine).
    HostTimeMode hostTime{HostTimeMode::Recorded};
    /// A profile whose recordings train the host-time model when [kernels] names none
    /// ([cpu] host_model); empty: the [kernels] profile's.
    std::filesystem::path hostModel;
    /// What each recorded gap is charged ([cpu] host_gap): its context's median, or its
    /// expected value (host_time/host_gap_table.h, ExpectedGap).
    bool hostGapMean{false};
};

/// One full-duplex link of a "custom" topology, as written in [[topology.links]].
struct LinkSpec
{
    std::string a; ///< node names: "gpu<i>" or one of the switches / NICs
    std::string b;
    double bitsPerSecond{0}; ///< per direction
    double latencyNs{0};
    std::string kind{"ethernet"}; ///< channel type: nvlink, pcie, ib, roce, ethernet
    int64_t line{0};              ///< where the link is written, for errors found later
};

/// How the GPUs are joined.  Which fields matter depends on kind (scenarios/README.md):
///   "switch":  every GPU has one link to one switch (link*);
///   "node":    one server, GPUs on an NVSwitch or a PCIe switch (intra, nvlink*, pcie*);
///   "cluster": servers of gpusPerNode GPUs with NICs on a rail-optimised leaf/spine
///              fabric (all of the node fields plus nic*, fabric, leaf/spine fields);
///   "custom":  named switches and NICs and an explicit list of links.
struct TopologySpec
{
    std::string kind{"switch"};
    uint32_t gpus{0};        ///< every kind: the cluster's GPU count (nodes x gpusPerNode)
    uint32_t gpusPerNode{0}; ///< GPUs a rank sees as its node's devices; NCCL's ranks per node
    int64_t line{0};         ///< line of the [topology] table, for errors found when building

    // "switch"
    double linkBitsPerSecond{0};
    double linkLatencyNs{0};
    std::string linkKind{"nvlink"};

    // "node" and "cluster": inside one server
    std::string intra{"nvswitch"}; ///< "nvswitch" or "pcie"
    double nvlinkBitsPerSecond{0}; ///< per GPU and direction, all its NVLinks together
    double nvlinkLatencyNs{0};
    double pcieBitsPerSecond{0}; ///< each GPU's PCIe link (to the PCIe switch or its NIC)
    double pcieLatencyNs{0};

    // "cluster": between servers
    uint32_t nodes{1};
    uint32_t gpusPerNic{1};
    std::string fabric{"infiniband"}; ///< "infiniband" or "roce"
    double nicBitsPerSecond{0};       ///< NIC to leaf, per direction
    double leafLatencyNs{0};          ///< NIC to leaf link
    double spineLatencyNs{0};         ///< leaf to spine link
    uint32_t nodesPerUnit{0};         ///< nodes sharing one set of rail leaves; 0: all
    uint32_t spines{0};               ///< 0: one per leaf of a unit (NICs per node)
    double oversubscription{1.0};     ///< leaf downlink over uplink capacity

    // "custom"
    std::vector<std::string> switches;
    std::vector<std::string> nics;
    std::vector<LinkSpec> links;
};

struct NetworkSpec
{
    std::string transport{"packet"}; ///< "packet" or "flow"
    uint32_t mtu{4096};
    uint32_t headerBytes{48};
};

/// [workload]: values the program reads back that kernels would have computed.  The
/// simulator computes no kernel, so a mixture-of-experts router's choices read back as
/// zeros (no expert gets a token); these settings give them a distribution instead,
/// through python/phantora_moe_routing.py (see docs/frameworks.md).
struct WorkloadSpec
{
    enum class MoeRouting
    {
        None,     ///< leave routing alone: what kernels "compute" (zeros) is read back
        Balanced, ///< every expert gets the same share of the tokens
        Skew,     ///< expert e's share falls as (e + 1)^-moeSkew (Zipf)
    };
    MoeRouting moeRouting{MoeRouting::None};
    double moeSkew{0.0}; ///< the Zipf exponent of "skew" (0 would be balanced)
    /// Which small device-to-host reads return the value the recording read on the GPU
    /// (host_time/readback_table.h) where the value shadow knows nothing of them
    /// (moe_routing's values, the program's own bytes keep precedence): "zeros" none,
    /// "float" float-looking ones (the default: a norm or loss compared with a threshold;
    /// integer counts and sizes depend on the world size and the data), "all" every one.
    host_time::ReadbackMode readback{host_time::ReadbackMode::Float};
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
    nccl::Config nccl; ///< the [nccl] table; NCCL's own orders of magnitude when absent
    WorkloadSpec workload;
};

} // namespace phantora
