// Scenario files are TOML.  Validation is strict on purpose: a misspelt key would
// otherwise silently fall back to a default and the user would study the wrong
// cluster.
#include "scenario_loader.h"

#include "nccl/selection.h"
#include "scenario_composer.h"
#include "toml_section.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

namespace phantora
{

namespace
{

using Section = TomlSection;

void ReadGpu(const Section& s, GpuSpec& gpu)
{
    s.AllowOnly({"model", "memory", "sm_count", "compute_capability", "launch_latency",
                 "stream_gap", "stream_gap_beside_blocked", "graph_node_gap", "hbm_bandwidth",
                 "pcie_bandwidth", "peak_tflops_bf16", "peak_tflops_f16", "peak_tflops_f32",
                 "peak_tflops_fp8", "peak_tflops_i8", "peak_tflops_tf32", "comm_interference",
                 "comm_rate_beside_memory_bound", "sm_clock_mhz", "l2_cache", "nvlink_generation",
                 "nvlink_bandwidth"});
    if (!s.Present())
    {
        s.FailMissing("model", "the [gpu] table with the GPU model and its memory");
    }
    gpu.model = *s.String("model", true);
    gpu.memoryBytes = *s.Bytes("memory", true);
    gpu.smCount = static_cast<int32_t>(s.Integer("sm_count", false, 1).value_or(gpu.smCount));
    if (auto cc = s.String("compute_capability", false))
    {
        int major = 0;
        int minor = 0;
        if (std::sscanf(cc->c_str(), "%d.%d", &major, &minor) != 2 || major <= 0 || minor < 0)
        {
            s.Fail(*s.Table()->get("compute_capability"), "compute_capability",
                   "expected \"MAJOR.MINOR\" such as \"9.0\"");
        }
        gpu.ccMajor = major;
        gpu.ccMinor = minor;
    }
    gpu.launchLatencyNs = std::llround(s.DurationNs("launch_latency", false).value_or(0));
    gpu.streamGapNs = std::llround(s.DurationNs("stream_gap", false).value_or(0));
    gpu.streamGapBesideBlockedNs =
        std::llround(s.DurationNs("stream_gap_beside_blocked", false).value_or(0));
    // Unset: a graph's nodes idle the stream as long as long-queued ops do (gpu_spec.h).
    gpu.graphNodeGapNs = std::llround(
        s.DurationNs("graph_node_gap", false).value_or(static_cast<double>(gpu.streamGapNs)));
    gpu.commInterference = s.Boolean("comm_interference", false).value_or(gpu.commInterference);
    if (const auto rate = s.Number("comm_rate_beside_memory_bound", false, 0.0))
    {
        if (*rate <= 0.0 || *rate > 1.0)
        {
            s.Fail(*s.Table()->get("comm_rate_beside_memory_bound"),
                   "comm_rate_beside_memory_bound",
                   fmt::format("expected a share of the collective's speed alone, above 0 and at "
                               "most 1 (1: memory sharing never slows it), got {}",
                               *rate));
        }
        gpu.commRateBesideMemoryBound = *rate;
    }
    gpu.hbmBitsPerSecond = *s.BitRate("hbm_bandwidth", true);
    gpu.pcieBitsPerSecond = *s.BitRate("pcie_bandwidth", true);
    // Datasheet figures: what a GPU predicted from another's profile is scaled by
    // (gpu_model/gpu_prediction.h); unset, 0.
    gpu.smClockMhz = static_cast<int32_t>(s.Integer("sm_clock_mhz", false, 1, 10000).value_or(0));
    gpu.l2Bytes = s.Bytes("l2_cache", false).value_or(0);
    gpu.nvlinkGeneration =
        static_cast<int32_t>(s.Integer("nvlink_generation", false, 1, 10).value_or(0));
    gpu.nvlinkBitsPerSecond = s.BitRate("nvlink_bandwidth", false).value_or(0.0);
    for (const char* type : {"bf16", "f16", "f32", "fp8", "i8", "tf32"})
    {
        if (auto v = s.Number(std::string("peak_tflops_") + type, false, 0.0))
        {
            // fp8 covers both encodings the interposer names
            const std::vector<std::string> names = std::string_view(type) == "fp8"
                                                       ? std::vector<std::string>{"e4m3", "e5m2"}
                                                       : std::vector<std::string>{type};
            for (const std::string& t : names)
            {
                gpu.peakTflops[t] = *v;
            }
        }
    }
}

/// A profile database named by \p key: relative to the file that names it (this scenario
/// or one it extends), so a scenario and its profile travel together.
std::filesystem::path ProfilePath(const Section& s, std::string_view key, const std::string& value)
{
    const std::filesystem::path writer = s.FileOf(*s.Node(key));
    std::filesystem::path path = std::filesystem::path(value).is_absolute()
                                     ? std::filesystem::path(value)
                                     : writer.parent_path() / value;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
    {
        s.Fail(*s.Node(key), std::string(key),
               fmt::format("expected a profile database (gpu_profiler), but {} is not a file",
                           path.string()));
    }
    return path;
}

void ReadCpu(const Section& s, CpuSpec& cpu)
{
    s.AllowOnly({"time_scale", "call_overhead", "query_overhead", "local_scale", "host_time",
                 "host_gap", "host_model"});
    cpu.timeScale = s.Number("time_scale", false, 0.0).value_or(cpu.timeScale);
    cpu.localScale = s.Number("local_scale", false, 0.0);
    if (auto mode = s.Choice("host_time", false, {"recorded", "model", "measured"}))
    {
        cpu.hostTime = *mode == "recorded" ? HostTimeMode::Recorded
                       : *mode == "model"  ? HostTimeMode::Model
                                           : HostTimeMode::Measured;
    }
    if (auto model = s.String("host_model", false))
    {
        cpu.hostModel = ProfilePath(s, "host_model", *model);
    }
    if (auto statistic = s.Choice("host_gap", false, {"median", "mean"}))
    {
        cpu.hostGapMean = *statistic == "mean";
    }
    cpu.callOverheadNs = std::llround(s.DurationNs("call_overhead", false).value_or(0));
    cpu.queryOverheadNs = std::llround(s.DurationNs("query_overhead", false).value_or(0));
}

void ReadWorkload(const Section& s, WorkloadSpec& w)
{
    s.AllowOnly({"moe_routing", "moe_skew", "readback"});
    const std::string readback =
        s.Choice("readback", false, {"zeros", "float", "all"}).value_or("float");
    w.readback = readback == "zeros" ? host_time::ReadbackMode::Zeros
                 : readback == "all" ? host_time::ReadbackMode::All
                                     : host_time::ReadbackMode::Float;
    const std::string routing =
        s.Choice("moe_routing", false, {"none", "balanced", "skew"}).value_or("none");
    w.moeRouting = routing == "balanced" ? WorkloadSpec::MoeRouting::Balanced
                   : routing == "skew"   ? WorkloadSpec::MoeRouting::Skew
                                         : WorkloadSpec::MoeRouting::None;
    const std::optional<double> skew = s.Number("moe_skew", false, 0.0);
    if (skew && w.moeRouting != WorkloadSpec::MoeRouting::Skew)
    {
        s.Fail(*s.Node("moe_skew"), "moe_skew", "only with moe_routing = \"skew\"");
    }
    if (w.moeRouting == WorkloadSpec::MoeRouting::Skew && !skew)
    {
        s.FailMissing("moe_skew", "the Zipf exponent of expert popularity (e.g. 1.0)");
    }
    w.moeSkew = skew.value_or(0.0);
}

// Bounds well above any machine built so far; past them a typo (an extra zero) is likelier
// than a real cluster, and route tables grow with the square of the GPU count.
constexpr int64_t kMaxGpusPerNode = 1024;
constexpr int64_t kMaxNodes = 16384;
constexpr int64_t kMaxGpus = 131072;

/// `gpus` and `gpus_per_node` (default: all on one node, which must divide `gpus`).
void ReadGpuCounts(const Section& s, TopologySpec& topo)
{
    topo.gpus = static_cast<uint32_t>(*s.Integer("gpus", true, 1, kMaxGpus));
    topo.gpusPerNode = static_cast<uint32_t>(
        s.Integer("gpus_per_node", false, 1, kMaxGpusPerNode).value_or(topo.gpus));
    if (topo.gpus % topo.gpusPerNode != 0)
    {
        s.Fail(*s.Node("gpus_per_node"), "gpus_per_node",
               fmt::format("expected a divisor of gpus ({})", topo.gpus));
    }
}

void ReadSwitchTopology(const Section& s, TopologySpec& topo)
{
    s.AllowOnly({"kind", "gpus", "gpus_per_node", "link_bandwidth", "link_latency", "link_kind"});
    ReadGpuCounts(s, topo);
    topo.linkBitsPerSecond = *s.BitRate("link_bandwidth", true);
    topo.linkLatencyNs = *s.LatencyNs("link_latency", true);
    topo.linkKind = s.Choice("link_kind", false, {"nvlink", "pcie", "ib", "roce", "ethernet"})
                        .value_or("nvlink");
}

/// The server's inside, shared by "node" and "cluster".  \p withNic: GPUs also have a
/// PCIe path to NICs, so the PCIe link is needed whatever the intra-node fabric.
void ReadServer(const Section& s, TopologySpec& topo, bool withNic)
{
    topo.intra = *s.Choice("intra", true, {"nvswitch", "pcie"});
    const bool nvswitch = topo.intra == "nvswitch";
    if (nvswitch)
    {
        topo.nvlinkBitsPerSecond = *s.BitRate("nvlink_bandwidth", true);
        topo.nvlinkLatencyNs = *s.LatencyNs("nvlink_latency", true);
    }
    else
    {
        for (const char* key : {"nvlink_bandwidth", "nvlink_latency"})
        {
            if (const toml::node* n = s.Node(key))
            {
                s.Fail(*n, key, "not used when intra = \"pcie\" (GPUs have no NVLink); remove it");
            }
        }
    }
    if (!nvswitch || withNic)
    {
        topo.pcieBitsPerSecond = *s.BitRate("pcie_bandwidth", true);
        topo.pcieLatencyNs = *s.LatencyNs("pcie_latency", true);
    }
}

void ReadNodeTopology(const Section& s, TopologySpec& topo)
{
    const auto intra = s.Choice("intra", true, {"nvswitch", "pcie"});
    if (*intra == "nvswitch")
    {
        s.AllowOnly({"kind", "gpus", "intra", "nvlink_bandwidth", "nvlink_latency"});
    }
    else
    {
        s.AllowOnly({"kind", "gpus", "intra", "pcie_bandwidth", "pcie_latency"});
    }
    topo.gpus = static_cast<uint32_t>(*s.Integer("gpus", true, 1, kMaxGpusPerNode));
    topo.gpusPerNode = topo.gpus;
    topo.nodes = 1;
    ReadServer(s, topo, false);
}

void ReadClusterTopology(const Section& s, TopologySpec& topo)
{
    s.AllowOnly({"kind", "nodes", "gpus_per_node", "intra", "nvlink_bandwidth", "nvlink_latency",
                 "pcie_bandwidth", "pcie_latency", "gpus_per_nic", "fabric", "nic_bandwidth",
                 "leaf_latency", "spine_latency", "nodes_per_unit", "spines", "oversubscription"});
    topo.nodes = static_cast<uint32_t>(*s.Integer("nodes", true, 1, kMaxNodes));
    topo.gpusPerNode = static_cast<uint32_t>(*s.Integer("gpus_per_node", true, 1, kMaxGpusPerNode));
    if (static_cast<int64_t>(topo.nodes) * topo.gpusPerNode > kMaxGpus)
    {
        s.Fail(*s.Node("nodes"), "nodes",
               fmt::format("expected nodes x gpus_per_node <= {}, got {} x {}", kMaxGpus,
                           topo.nodes, topo.gpusPerNode));
    }
    topo.gpus = topo.nodes * topo.gpusPerNode;
    ReadServer(s, topo, true);
    topo.gpusPerNic =
        static_cast<uint32_t>(s.Integer("gpus_per_nic", false, 1, topo.gpusPerNode).value_or(1));
    if (topo.gpusPerNode % topo.gpusPerNic != 0)
    {
        s.Fail(*s.Node("gpus_per_nic"), "gpus_per_nic",
               fmt::format("expected a divisor of gpus_per_node ({})", topo.gpusPerNode));
    }
    topo.fabric = *s.Choice("fabric", true, {"infiniband", "roce"});
    topo.nicBitsPerSecond = *s.BitRate("nic_bandwidth", true);
    topo.leafLatencyNs = *s.LatencyNs("leaf_latency", true);
    topo.nodesPerUnit = static_cast<uint32_t>(
        s.Integer("nodes_per_unit", false, 1, topo.nodes).value_or(topo.nodes));
    if (topo.nodes % topo.nodesPerUnit != 0)
    {
        s.Fail(*s.Node("nodes_per_unit"), "nodes_per_unit",
               fmt::format("expected a divisor of nodes ({})", topo.nodes));
    }
    const uint32_t nicsPerNode = topo.gpusPerNode / topo.gpusPerNic;
    const bool hasSpines = topo.nodes > 1 && (topo.nodes > topo.nodesPerUnit || nicsPerNode > 1);
    topo.spines = static_cast<uint32_t>(s.Integer("spines", false, 1, 4096).value_or(nicsPerNode));
    topo.oversubscription = s.Number("oversubscription", false, 1.0).value_or(1.0);
    topo.spineLatencyNs = s.LatencyNs("spine_latency", hasSpines).value_or(0);
}

void ReadCustomTopology(const Section& s, TopologySpec& topo)
{
    s.AllowOnly({"kind", "gpus", "gpus_per_node", "switches", "nics", "links"});
    ReadGpuCounts(s, topo);
    topo.nodes = topo.gpus / topo.gpusPerNode;
    topo.switches = s.Names("switches");
    topo.nics = s.Names("nics");
    // Every name must say one thing: GPUs are gpu0 .. gpu<n-1>, the rest as declared.
    std::map<std::string, std::string> declared;
    for (uint32_t g = 0; g < topo.gpus; ++g)
    {
        declared["gpu" + std::to_string(g)] = "a GPU";
    }
    for (const auto* list : {&topo.switches, &topo.nics})
    {
        const char* key = list == &topo.switches ? "switches" : "nics";
        for (const auto& name : *list)
        {
            if (!declared.emplace(name, key).second)
            {
                s.Fail(*s.Node(key), std::string(key),
                       fmt::format("'{}' is declared twice (already {})", name, declared[name]));
            }
        }
    }
    const toml::node* links = s.Node("links");
    if (!links)
    {
        s.FailMissing("links", "an array of [[topology.links]] tables");
    }
    if (!links->is_array_of_tables())
    {
        s.Fail(*links, "links", "expected [[topology.links]] tables");
    }
    std::size_t i = 0;
    for (const toml::node& e : *links->as_array())
    {
        const Section l = s.Element(fmt::format("links[{}]", i++), e.as_table());
        l.AllowOnly({"between", "bandwidth", "latency", "kind"});
        const toml::node* between = l.Node("between");
        if (!between)
        {
            l.FailMissing("between", "the two ends, e.g. [\"gpu0\", \"nvswitch\"]");
        }
        const toml::array* ends = between->as_array();
        if (!ends || ends->size() != 2 || !(*ends)[0].is_string() || !(*ends)[1].is_string())
        {
            l.Fail(*between, "between", "expected two names, e.g. [\"gpu0\", \"nvswitch\"]");
        }
        LinkSpec link;
        link.a = (*ends)[0].as_string()->get();
        link.b = (*ends)[1].as_string()->get();
        for (const auto* end : {&link.a, &link.b})
        {
            if (!declared.count(*end))
            {
                l.Fail(*between, "between",
                       fmt::format("'{}' is neither a GPU (gpu0 .. gpu{}) nor in switches or nics",
                                   *end, topo.gpus - 1));
            }
        }
        if (link.a == link.b)
        {
            l.Fail(*between, "between", "expected two different ends");
        }
        link.bitsPerSecond = *l.BitRate("bandwidth", true);
        link.latencyNs = *l.LatencyNs("latency", true);
        link.kind = l.Choice("kind", false, {"nvlink", "pcie", "ib", "roce", "ethernet"})
                        .value_or(link.kind);
        link.line = e.source().begin.line;
        topo.links.push_back(std::move(link));
    }
}

void ReadTopology(const Section& s, TopologySpec& topo)
{
    if (!s.Present())
    {
        s.FailMissing("kind", "the [topology] table");
    }
    topo.line = s.Line();
    topo.kind = *s.Choice("kind", true, {"switch", "node", "cluster", "custom"});
    if (topo.kind == "switch")
    {
        ReadSwitchTopology(s, topo);
    }
    else if (topo.kind == "node")
    {
        ReadNodeTopology(s, topo);
    }
    else if (topo.kind == "cluster")
    {
        ReadClusterTopology(s, topo);
    }
    else
    {
        ReadCustomTopology(s, topo);
    }
}

void ReadNetwork(const Section& s, NetworkSpec& net)
{
    s.AllowOnly({"transport", "mtu", "header_bytes"});
    if (auto t = s.String("transport", false))
    {
        if (*t != "packet" && *t != "flow")
        {
            s.Fail(*s.Table()->get("transport"), "transport", "expected \"packet\" or \"flow\"");
        }
        net.transport = *t;
    }
    net.mtu = static_cast<uint32_t>(s.Integer("mtu", false, 64).value_or(net.mtu));
    net.headerBytes =
        static_cast<uint32_t>(s.Integer("header_bytes", false, 24).value_or(net.headerBytes));
    if (net.headerBytes >= net.mtu)
    {
        s.Fail(*s.Table()->get("header_bytes"), "header_bytes", "expected fewer bytes than mtu");
    }
}

/// [kernels] profile_of: a GPU's name, whose datasheet is gpus/NAME.toml beside the file
/// that names it, or a datasheet's path (a file whose [gpu] table describes the GPU).
void ReadProfileOf(const Section& s, KernelSpec& k)
{
    const auto value = s.String("profile_of", false);
    if (!value)
        return;
    if (k.profile.empty())
        s.Fail(*s.Node("profile_of"), "profile_of",
               "only with a profile: the measured GPU's profile = \"...sqlite\" it names");
    const std::filesystem::path writer = s.FileOf(*s.Node("profile_of"));
    const bool path = value->find('/') != std::string::npos ||
                      std::filesystem::path(*value).extension() == ".toml";
    std::filesystem::path file =
        path ? std::filesystem::path(*value) : std::filesystem::path("gpus") / (*value + ".toml");
    if (file.is_relative())
        file = writer.parent_path() / file;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        s.Fail(*s.Node("profile_of"), "profile_of",
               fmt::format("expected the name of a GPU with a datasheet in gpus/ beside the "
                           "scenario, or a datasheet's path, but {} is not a file",
                           file.string()));
    const toml::table root = ComposeScenarioToml(file);
    const Section top(file, "", &root);
    top.AllowOnly({"gpu"});
    GpuSpec source;
    ReadGpu(top.Sub("gpu"), source);
    k.profileOf = std::move(source);
    k.profileOfFile = file;
}

void ReadKernels(const Section& s, KernelSpec& k)
{
    s.AllowOnly({"default", "durations", "profile", "profile_of"});
    k.defaultNs = std::llround(*s.DurationNs("default", true));
    if (auto profile = s.String("profile", false))
    {
        k.profile = ProfilePath(s, "profile", *profile);
    }
    ReadProfileOf(s, k);
    const Section durations = s.Sub("durations");
    if (const toml::table* t = durations.Table())
    {
        for (const auto& [name, node] : *t)
        {
            k.durationsNs[std::string(name.str())] =
                std::llround(*durations.DurationNs(name.str(), true));
        }
    }
}

void ReadNcclProtocol(const Section& s, const char* prefix, nccl::ProtocolParams& p)
{
    const std::string pre(prefix);
    if (auto v = s.DurationNs(pre + "_base_latency", false))
    {
        p.baseLatencyNs = *v;
    }
    if (auto v = s.DurationNs(pre + "_step_latency", false))
    {
        p.stepLatencyNs = *v;
    }
    if (auto v = s.BitRate(pre + "_channel_bandwidth", false))
    {
        p.channelBytesPerSecond = *v / 8.0;
    }
    p.chunkBytes = s.Bytes(pre + "_chunk_bytes", false).value_or(p.chunkBytes);
}

void ReadNccl(const Section& s, nccl::Config& nccl)
{
    s.AllowOnly({"algorithm",
                 "protocol",
                 "min_channels",
                 "max_channels",
                 "min_bytes_per_channel",
                 "chunk_bytes",
                 "max_chunks_per_channel",
                 "tree_level_latency",
                 "p2p_latency",
                 "ll_base_latency",
                 "ll_step_latency",
                 "ll_channel_bandwidth",
                 "ll128_base_latency",
                 "ll128_step_latency",
                 "ll128_channel_bandwidth",
                 "simple_base_latency",
                 "simple_step_latency",
                 "simple_channel_bandwidth",
                 "ll_chunk_bytes",
                 "ll128_chunk_bytes",
                 "simple_chunk_bytes",
                 "nvls",
                 "nvls_channels",
                 "nvls_chunk_bytes",
                 "nvls_base_latency",
                 "nvls_step_latency",
                 "nvls_channel_bandwidth",
                 "nvls_tree_channel_bandwidth",
                 "nvls_tree_level_latency",
                 "ring_graph_bandwidth",
                 "ring_graph_channels",
                 "recv_copy_bandwidth",
                 "p2p_channels",
                 "p2p_channels_per_peer",
                 "p2p_chunk_bytes",
                 "p2p_ll_threshold",
                 "p2p_channel_bandwidth"});
    if (auto a = s.String("algorithm", false))
    {
        // "auto" or an NCCL_ALGO spec as NCCL reads it ("ring", "^nvls", "allreduce:tree").
        if (*a != "auto")
        {
            try
            {
                nccl::ValidateAlgorithmSpec(*a);
            }
            catch (const std::invalid_argument& e)
            {
                s.Fail(*s.Table()->get("algorithm"), "algorithm",
                       fmt::format("expected \"auto\" or an NCCL_ALGO spec: {}", e.what()));
            }
        }
        nccl.algorithm = *a == "auto" ? "" : *a;
    }
    if (auto p = s.String("protocol", false))
    {
        if (*p != "auto" && *p != "ll" && *p != "ll128" && *p != "simple")
        {
            s.Fail(*s.Table()->get("protocol"), "protocol",
                   "expected \"auto\", \"ll\", \"ll128\" or \"simple\" (NCCL_PROTO)");
        }
        nccl.protocol = *p == "auto" ? "" : *p;
    }
    nccl.minChannels =
        static_cast<uint32_t>(s.Integer("min_channels", false, 1).value_or(nccl.minChannels));
    nccl.maxChannels =
        static_cast<uint32_t>(s.Integer("max_channels", false, 1).value_or(nccl.maxChannels));
    if (nccl.maxChannels < nccl.minChannels)
    {
        s.Fail(*s.Table()->get(s.Table()->get("max_channels") ? "max_channels" : "min_channels"),
               s.Table()->get("max_channels") ? "max_channels" : "min_channels",
               "expected min_channels <= max_channels");
    }
    nccl.minBytesPerChannel =
        s.Bytes("min_bytes_per_channel", false).value_or(nccl.minBytesPerChannel);
    nccl.chunkBytes = s.Bytes("chunk_bytes", false).value_or(nccl.chunkBytes);
    nccl.maxChunksPerChannel = static_cast<uint32_t>(
        s.Integer("max_chunks_per_channel", false, 1).value_or(nccl.maxChunksPerChannel));
    nccl.treeLevelLatencyNs =
        s.DurationNs("tree_level_latency", false).value_or(nccl.treeLevelLatencyNs);
    nccl.p2pLatencyNs = s.DurationNs("p2p_latency", false).value_or(nccl.p2pLatencyNs);
    ReadNcclProtocol(s, "ll", nccl.ll);
    ReadNcclProtocol(s, "ll128", nccl.ll128);
    ReadNcclProtocol(s, "simple", nccl.simple);
    nccl.nvlsEnable = s.Boolean("nvls", false).value_or(nccl.nvlsEnable);
    nccl.nvlsChannels =
        static_cast<uint32_t>(s.Integer("nvls_channels", false, 2, 64).value_or(nccl.nvlsChannels));
    ReadNcclProtocol(s, "nvls", nccl.nvls);
    if (auto v = s.BitRate("nvls_tree_channel_bandwidth", false))
    {
        nccl.nvlsTreeChannelBytesPerSecond = *v / 8.0;
    }
    nccl.nvlsTreeLevelLatencyNs =
        s.DurationNs("nvls_tree_level_latency", false).value_or(nccl.nvlsTreeLevelLatencyNs);
    // NCCL's ring graph (NCCL_DEBUG=GRAPH "nChannels 12, bw 30"): its tuning table's input
    if (auto v = s.BitRate("ring_graph_bandwidth", false))
    {
        nccl.ringGraphBytesPerSecond = *v / 8.0;
    }
    if (auto v = s.BitRate("recv_copy_bandwidth", false))
    {
        nccl.recvCopyBytesPerSecond = *v / 8.0;
    }
    // NCCL's p2p setup (NCCL_DEBUG=INFO: "32 p2p channels, 32 p2p channels per peer",
    // "P2P Chunksize set to 524288"): send/recv channels and protocol as NCCL picks them.
    nccl.p2pChannels =
        static_cast<uint32_t>(s.Integer("p2p_channels", false, 1, 64).value_or(nccl.p2pChannels));
    nccl.p2pChannelsPerPeer = static_cast<uint32_t>(
        s.Integer("p2p_channels_per_peer", false, 1, 64).value_or(nccl.p2pChannelsPerPeer));
    if ((nccl.p2pChannels > 0) != (nccl.p2pChannelsPerPeer > 0))
    {
        const char* given = nccl.p2pChannels > 0 ? "p2p_channels" : "p2p_channels_per_peer";
        s.Fail(*s.Table()->get(given), given,
               "expected p2p_channels and p2p_channels_per_peer together (NCCL logs both)");
    }
    nccl.p2pChunkBytes = s.Bytes("p2p_chunk_bytes", false).value_or(nccl.p2pChunkBytes);
    nccl.p2pLLThresholdBytes =
        s.Bytes("p2p_ll_threshold", false).value_or(nccl.p2pLLThresholdBytes);
    if (auto v = s.BitRate("p2p_channel_bandwidth", false))
    {
        nccl.p2pChannelBytesPerSecond = *v / 8.0;
    }
    nccl.ringGraphChannels = static_cast<uint32_t>(
        s.Integer("ring_graph_channels", false, 1, 64).value_or(nccl.ringGraphChannels));
}

/// NVLS needs the NVSwitch's reduction: GPUs on an NVSwitch (both transports model it).
void CheckNvls(const Section& s, const Scenario& sc)
{
    if (!sc.nccl.nvlsEnable)
    {
        return;
    }
    const TopologySpec& t = sc.topology;
    const bool nvswitch = ((t.kind == "node" || t.kind == "cluster") && t.intra == "nvswitch") ||
                          (t.kind == "switch" && t.linkKind == "nvlink");
    if (!nvswitch)
    {
        s.Fail(*s.Table()->get("nvls"), "nvls",
               "NVLS needs GPUs on an NVSwitch ([topology] intra = \"nvswitch\")");
    }
}

Scenario ReadScenario(const std::filesystem::path& file)
{
    toml::table root = ComposeScenarioToml(file);
    Scenario sc;
    sc.file = file;
    const Section top(file, "", &root);
    top.AllowOnly({"name", "gpu", "cpu", "topology", "network", "kernels", "nccl", "workload"});
    sc.name = top.String("name", false).value_or(file.stem().string());
    ReadGpu(top.Sub("gpu"), sc.gpu);
    ReadCpu(top.Sub("cpu"), sc.cpu);
    ReadTopology(top.Sub("topology"), sc.topology);
    ReadNetwork(top.Sub("network"), sc.network);
    if (!root.get("kernels"))
    {
        top.FailMissing("kernels", "the [kernels] table with at least 'default'");
    }
    ReadKernels(top.Sub("kernels"), sc.kernels);
    ReadNccl(top.Sub("nccl"), sc.nccl);
    ReadWorkload(top.Sub("workload"), sc.workload);
    CheckNvls(top.Sub("nccl"), sc);
    // The tuning model's view of the network (NCCL's bwInter): each GPU's share of its
    // node's NICs, where the scenario has NICs.
    if (sc.topology.kind == "cluster" && sc.topology.nicBitsPerSecond > 0)
    {
        sc.nccl.netBytesPerSecond =
            sc.topology.nicBitsPerSecond / 8.0 / std::max(sc.topology.gpusPerNic, 1U);
    }
    return sc;
}

} // namespace

Scenario LoadScenario(const std::filesystem::path& file)
{
    try
    {
        return ReadScenario(file);
    }
    catch (const TomlError& e)
    {
        throw ScenarioError(e.what());
    }
}

} // namespace phantora
