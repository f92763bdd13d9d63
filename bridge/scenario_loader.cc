// Scenario files are TOML.  Validation is strict on purpose: a misspelt key would
// otherwise silently fall back to a default and the user would study the wrong
// cluster.
#include "scenario.h"
#include "units.h"

#include <cmath>
#include <fmt/format.h>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <toml++/toml.h>

namespace phantora
{

namespace
{

/// One table of the file, with the context needed to say where a problem is.
class Section
{
public:
    Section(const std::filesystem::path& file, std::string name, const toml::table* table)
        : m_file(file), m_name(std::move(name)), m_table(table)
    {
    }

    bool Present() const { return m_table != nullptr; }

    /// Rejects keys this section does not know: a typo must not pass as a default.
    void AllowOnly(std::initializer_list<std::string_view> keys) const
    {
        if (!m_table)
        {
            return;
        }
        for (const auto& [k, node] : *m_table)
        {
            bool known = false;
            for (auto allowed : keys)
            {
                known = known || k.str() == allowed;
            }
            if (!known)
            {
                std::string list;
                for (auto allowed : keys)
                {
                    list += list.empty() ? "" : ", ";
                    list += allowed;
                }
                Fail(node, std::string(k.str()),
                     fmt::format("unknown key; expected one of: {}", list));
            }
        }
    }

    Section Sub(std::string_view key) const
    {
        const toml::node* n = Find(key);
        if (n && !n->is_table())
        {
            Fail(*n, std::string(key), "expected a table");
        }
        return Section(m_file, Qualified(key), n ? n->as_table() : nullptr);
    }

    const toml::table* Table() const { return m_table; }

    std::optional<std::string> String(std::string_view key, bool required) const
    {
        const toml::node* n = Lookup(key, required, "a string");
        if (!n)
        {
            return std::nullopt;
        }
        if (!n->is_string())
        {
            Fail(*n, std::string(key), "expected a string");
        }
        return n->as_string()->get();
    }

    std::optional<int64_t> Integer(std::string_view key, bool required, int64_t min) const
    {
        const toml::node* n = Lookup(key, required, "an integer");
        if (!n)
        {
            return std::nullopt;
        }
        if (!n->is_integer())
        {
            Fail(*n, std::string(key), "expected an integer");
        }
        const int64_t v = n->as_integer()->get();
        if (v < min)
        {
            Fail(*n, std::string(key), fmt::format("expected an integer >= {}, got {}", min, v));
        }
        return v;
    }

    std::optional<double> Number(std::string_view key, bool required, double min) const
    {
        const toml::node* n = Lookup(key, required, "a number");
        if (!n)
        {
            return std::nullopt;
        }
        if (!n->is_number())
        {
            Fail(*n, std::string(key), "expected a number");
        }
        const double v = n->value<double>().value();
        if (!(v >= min))
        {
            Fail(*n, std::string(key), fmt::format("expected a number >= {}, got {}", min, v));
        }
        return v;
    }

    /// A bandwidth such as "400Gbps" or "26.5GB/s", strictly positive.
    std::optional<double> BitRate(std::string_view key, bool required) const
    {
        return Quantity<double>(key, required, "a bandwidth such as \"400Gbps\" or \"50GB/s\"",
                                ParseBitRate, true);
    }

    /// A duration such as "1us" or "250ns", zero or more.
    std::optional<double> DurationNs(std::string_view key, bool required) const
    {
        return Quantity<double>(key, required, "a duration such as \"1.5us\" or \"250ns\"",
                                ParseDurationNs, false);
    }

    std::optional<uint64_t> Bytes(std::string_view key, bool required) const
    {
        const toml::node* n = Lookup(key, required, "a size");
        if (!n)
        {
            return std::nullopt;
        }
        if (n->is_integer() && n->as_integer()->get() > 0)
        {
            return static_cast<uint64_t>(n->as_integer()->get());
        }
        if (n->is_string())
        {
            if (auto v = ParseBytes(n->as_string()->get()); v && *v > 0)
            {
                return v;
            }
        }
        Fail(*n, std::string(key), "expected a positive size such as \"141GiB\" or 4096");
    }

    [[noreturn]] void Fail(const toml::node& n, const std::string& key,
                           const std::string& what) const
    {
        const auto& src = n.source();
        const std::string where = src.begin.line
                                      ? fmt::format("{}:{}", m_file.string(), src.begin.line)
                                      : m_file.string();
        throw ScenarioError(fmt::format("{}: '{}': {}", where, Qualified(key), what));
    }

    [[noreturn]] void FailMissing(std::string_view key, std::string_view what) const
    {
        throw ScenarioError(
            fmt::format("{}: missing '{}' ({})", m_file.string(), Qualified(key), what));
    }

private:
    template <class T, class Parser>
    std::optional<T> Quantity(std::string_view key, bool required, std::string_view what,
                              Parser parse, bool positive) const
    {
        const toml::node* n = Lookup(key, required, what);
        if (!n)
        {
            return std::nullopt;
        }
        std::optional<T> v;
        if (n->is_string())
        {
            v = parse(n->as_string()->get());
        }
        if (!v || (positive ? !(*v > 0) : !(*v >= 0)))
        {
            Fail(*n, std::string(key),
                 fmt::format("expected {}{}",
                             positive ? "a positive value: " : "a non-negative value: ", what));
        }
        return v;
    }

    const toml::node* Find(std::string_view key) const
    {
        return m_table ? m_table->get(key) : nullptr;
    }

    const toml::node* Lookup(std::string_view key, bool required, std::string_view what) const
    {
        const toml::node* n = Find(key);
        if (!n && required)
        {
            FailMissing(key, what);
        }
        return n;
    }

    std::string Qualified(std::string_view key) const
    {
        return m_name.empty() ? std::string(key) : m_name + "." + std::string(key);
    }

    const std::filesystem::path& m_file;
    std::string m_name;
    const toml::table* m_table;
};

void ReadGpu(const Section& s, GpuSpec& gpu)
{
    s.AllowOnly({"model", "memory", "sm_count", "compute_capability", "launch_latency",
                 "hbm_bandwidth", "pcie_bandwidth"});
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
    gpu.hbmBitsPerSecond = *s.BitRate("hbm_bandwidth", true);
    gpu.pcieBitsPerSecond = *s.BitRate("pcie_bandwidth", true);
}

void ReadCpu(const Section& s, CpuSpec& cpu)
{
    s.AllowOnly({"time_scale", "call_overhead"});
    cpu.timeScale = s.Number("time_scale", false, 0.0).value_or(cpu.timeScale);
    cpu.callOverheadNs = std::llround(s.DurationNs("call_overhead", false).value_or(0));
}

void ReadTopology(const Section& s, TopologySpec& topo)
{
    s.AllowOnly({"kind", "gpus", "gpus_per_node", "link_bandwidth", "link_latency", "link_kind"});
    if (!s.Present())
    {
        s.FailMissing("kind", "the [topology] table");
    }
    topo.kind = *s.String("kind", true);
    if (topo.kind != "switch")
    {
        s.Fail(*s.Table()->get("kind"), "kind",
               "expected \"switch\" (one switch, one link per GPU)");
    }
    topo.gpus = static_cast<uint32_t>(*s.Integer("gpus", true, 1));
    topo.gpusPerNode =
        static_cast<uint32_t>(s.Integer("gpus_per_node", false, 1).value_or(topo.gpus));
    if (topo.gpus % topo.gpusPerNode != 0)
    {
        s.Fail(*s.Table()->get("gpus_per_node"), "gpus_per_node",
               fmt::format("expected a divisor of gpus ({})", topo.gpus));
    }
    topo.linkBitsPerSecond = *s.BitRate("link_bandwidth", true);
    topo.linkLatencyNs = *s.DurationNs("link_latency", true);
    topo.linkKind = s.String("link_kind", false).value_or(topo.linkKind);
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

void ReadKernels(const Section& s, KernelSpec& k)
{
    s.AllowOnly({"default", "durations"});
    k.defaultNs = std::llround(*s.DurationNs("default", true));
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

void ReadNcclProtocol(const Section& s, const char* prefix, ns3::NcclProtocolParams& p)
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
}

void ReadNccl(const Section& s, ns3::NcclConfig& nccl)
{
    s.AllowOnly({"algorithm", "protocol", "min_channels", "max_channels", "min_bytes_per_channel",
                 "chunk_bytes", "max_chunks_per_channel", "tree_level_latency", "ll_base_latency",
                 "ll_step_latency", "ll_channel_bandwidth", "ll128_base_latency",
                 "ll128_step_latency", "ll128_channel_bandwidth", "simple_base_latency",
                 "simple_step_latency", "simple_channel_bandwidth"});
    if (auto a = s.String("algorithm", false))
    {
        if (*a != "auto" && *a != "ring" && *a != "tree")
        {
            s.Fail(*s.Table()->get("algorithm"), "algorithm",
                   "expected \"auto\", \"ring\" or \"tree\" (NCCL_ALGO)");
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
    ReadNcclProtocol(s, "ll", nccl.ll);
    ReadNcclProtocol(s, "ll128", nccl.ll128);
    ReadNcclProtocol(s, "simple", nccl.simple);
}

} // namespace

Scenario LoadScenario(const std::filesystem::path& file)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
    {
        throw ScenarioError(fmt::format("{}: no such scenario file", file.string()));
    }
    toml::table root;
    try
    {
        root = toml::parse_file(file.string());
    }
    catch (const toml::parse_error& e)
    {
        const auto& src = e.source();
        throw ScenarioError(fmt::format("{}:{}:{}: {}", file.string(), src.begin.line,
                                        src.begin.column, e.description()));
    }
    Scenario sc;
    sc.file = file;
    const Section top(file, "", &root);
    top.AllowOnly({"name", "gpu", "cpu", "topology", "network", "kernels", "nccl"});
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
    return sc;
}

} // namespace phantora
