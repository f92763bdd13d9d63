#include "kernel_cost_table.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

namespace phantora
{

using profile::OpKey;
using profile::OpKind;

namespace
{
std::unique_ptr<profile::ProfileReader> OpenProfile(const GpuSpec& gpu, const KernelSpec& kernels,
                                                    const std::filesystem::path& describedBy)
{
    // phantora-cluster --profile's files first, in order, then the scenario's.
    std::vector<std::filesystem::path> files = kernels.extraProfiles;
    if (!kernels.profile.empty())
    {
        files.push_back(kernels.profile);
    }
    if (files.empty())
    {
        return nullptr;
    }
    auto p = std::make_unique<profile::ProfileReader>(files);
    if (kernels.profileOf)
    {
        // A predicted GPU: the profile must be the one whose datasheet profile_of gives.
        if (p->GpuModel() != kernels.profileOf->model)
            throw profile::ProfileError(fmt::format(
                "profile {} was measured on \"{}\" but [kernels] profile_of in {} names the "
                "datasheet of \"{}\" ({}): profile_of must describe the GPU the profile was "
                "measured on",
                p->File().string(), p->GpuModel(), describedBy.string(), kernels.profileOf->model,
                kernels.profileOfFile.string()));
        return p;
    }
    if (p->GpuModel() != gpu.model)
    {
        // What to do instead: a profile of the scenario's GPU beside this one, if there is
        // one (profiles/ holds one per model, named after it), else a recording of it.
        const std::filesystem::path sibling = p->File().parent_path() / (gpu.model + ".sqlite");
        const std::string instead =
            std::filesystem::is_regular_file(sibling)
                ? fmt::format("Use {} (the scenarios *-profiled.toml of a {} do)", sibling.string(),
                              gpu.model)
                : fmt::format("Record a profile on a {} (gpu_profiler/README.md)", gpu.model);
        throw profile::ProfileError(fmt::format(
            "profile {} was measured on \"{}\" but the scenario {} has [gpu] model = \"{}\": "
            "its kernel times would be another GPU's. {}, or simulate a {} (a scenario with "
            "[gpu] model = \"{}\", as the scenarios/*-profiled.toml of that GPU have)",
            p->File().string(), p->GpuModel(), describedBy.string(), gpu.model, instead,
            p->GpuModel(), p->GpuModel()));
    }
    return p;
}
} // namespace

KernelCostTable::KernelCostTable(const GpuSpec& gpu, const KernelSpec& kernels,
                                 const std::filesystem::path& describedBy)
    : m_spec(kernels), m_profile(OpenProfile(gpu, kernels, describedBy)),
      // A predicted GPU's estimates are the profile's GPU's, scaled like its measurements.
      m_estimator(m_profile.get(), kernels.profileOf && m_profile ? *kernels.profileOf : gpu)
{
    if (kernels.profileOf && m_profile)
    {
        m_prediction = std::make_unique<GpuPrediction>(*kernels.profileOf, gpu,
                                                       GpuPrediction::LatencyFloorNs(*m_profile));
    }
}

OpCost KernelCostTable::Predicted(const OpKey& key, OpCost c, const std::string& args,
                                  const std::string& work)
{
    if (!m_prediction)
        return c;
    const PredictedCost p = m_prediction->Scale(key, static_cast<double>(c.ns), args, work);
    PredictedTotals& t = m_predicted[static_cast<std::size_t>(p.cls)];
    ++t.ops;
    t.sourceNs += static_cast<double>(c.ns);
    t.ns += p.ns;
    return {std::llround(p.ns), c.source};
}

std::optional<int64_t> KernelCostTable::FromTable(std::string_view name) const
{
    auto find = [this](std::string_view key) { return m_spec.durationsNs.find(std::string(key)); };
    auto it = find(name);
    if (it == m_spec.durationsNs.end())
    {
        // "void ns::name<T>(args)": compare on the bare name, the way a user writes it;
        // a GEMM signature "cublasGemmEx(m=...)" matches "cublasGemmEx", a cuDNN one
        // "cudnnSdpaFprop(b=...)" matches "cudnnSdpaFprop".
        std::string_view bare = name.substr(0, name.find('('));
        if (auto space = bare.rfind(' '); space != std::string_view::npos)
        {
            bare = bare.substr(space + 1);
        }
        it = find(bare);
    }
    if (it == m_spec.durationsNs.end())
    {
        return std::nullopt;
    }
    return it->second;
}

OpCost KernelCostTable::Lookup(const OpKey& key, int64_t modelNs, const std::string& args,
                               const std::string& work)
{
    OpCost c;
    std::optional<int64_t> v;
    if (key.kind == OpKind::Kernel || key.kind == OpKind::Gemm || key.kind == OpKind::Cudnn)
    {
        v = FromTable(key.name);
    }
    if (v)
    {
        c = {*v, CostSource::Table};
    }
    else if (const profile::OpStats* s = m_profile ? m_profile->Find(key) : nullptr)
    {
        const bool span = profile::IsLibraryCall(key.kind);
        const double* sameArgs = s->ArgsMedian(args);
        const double* own = sameArgs ? nullptr : s->ProgramOnStream(m_program, span);
        c = Predicted(key,
                      {std::llround(sameArgs ? *sameArgs
                                    : own    ? *own
                                             : s->OnStreamNs({}, span)),
                       CostSource::Measured},
                      args, work);
        m_fromArgs += sameArgs ? 1 : 0;
        m_fromProgram += own ? 1 : 0;
        if (!m_program.empty() && !s->ProgramOnStream(m_program, span))
            m_measuredElsewhereNs += c.ns;
    }
    else if (auto seen = m_estimates.find({key, args, work}); seen != m_estimates.end())
    {
        // Cached as the profile's GPU's time: a predicted GPU's scaled (and counted) again.
        c = seen->second.fromProfile ? Predicted(key, seen->second.cost, args, work)
                                     : seen->second.cost;
        if (c.source == CostSource::Default)
        {
            ++m_defaulted[key.name];
        }
    }
    else
    {
        Estimated e;
        if (auto found = m_estimator.Estimate(key, args, work))
        {
            e = {*found, true};
            c = Predicted(key, *found, args, work);
        }
        else if (modelNs >= 0)
        {
            // the scenario's own link model: already the scenario's GPU
            c = e.cost = {modelNs, CostSource::Roofline};
        }
        else
        {
            c = e.cost = {m_spec.defaultNs, CostSource::Default};
            ++m_defaulted[key.name];
        }
        m_estimates.emplace(std::make_tuple(key, args, work), e);
    }
    Totals& t = m_totals[static_cast<std::size_t>(c.source)];
    ++t.ops;
    t.ns += c.ns;
    if (c.source != CostSource::Table && c.source != CostSource::Measured)
    {
        Miss& m = m_misses[key];
        if (m.count == 0)
        {
            m.key = key;
            m.source = c.source;
            m.perLaunchNs = c.ns;
        }
        ++m.count;
        m.ns += c.ns;
    }
    return c;
}

OpCost KernelCostTable::Kernel(const OpKey& key, const std::string& args, const std::string& work)
{
    return Lookup(key, -1, args, work);
}

int64_t KernelCostTable::DurationNs(std::string_view kernelName)
{
    return Lookup(profile::KeyForLaunch(kernelName, {}, {}, 0), -1).ns;
}

OpCost KernelCostTable::Copy(const OpKey& key, int64_t modelNs, bool pinnedHost)
{
    return Lookup(key, std::max<int64_t>(modelNs, 0), {}, pinnedHost ? "pinned=1" : "");
}

double KernelCostTable::MeasuredShare() const
{
    int64_t all = 0;
    for (const Totals& t : m_totals)
    {
        all += t.ns;
    }
    if (all == 0)
    {
        return 1.0;
    }
    const int64_t known =
        m_totals[size_t(CostSource::Table)].ns + m_totals[size_t(CostSource::Measured)].ns;
    return static_cast<double>(known) / static_cast<double>(all);
}

uint64_t KernelCostTable::Hits() const
{
    return m_totals[size_t(CostSource::Table)].ops + m_totals[size_t(CostSource::Measured)].ops;
}

std::vector<KernelCostTable::Miss> KernelCostTable::Misses() const
{
    std::vector<Miss> out;
    for (const auto& [key, m] : m_misses)
    {
        out.push_back(m);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Miss& a, const Miss& b) { return a.ns > b.ns; });
    return out;
}

void KernelCostTable::WriteMissing(const std::filesystem::path& file) const
{
    nlohmann::json ops = nlohmann::json::array();
    for (const Miss& m : Misses())
    {
        ops.push_back({{"kind", profile::OpKindName(m.key.kind)},
                       {"name", m.key.name},
                       {"grid", m.key.grid},
                       {"block", m.key.block},
                       {"shared_mem", m.key.sharedMem},
                       {"bytes", m.key.bytes},
                       {"launches", m.count},
                       {"estimated_ns", m.ns},
                       {"estimate", CostSourceName(m.source)},
                       {"describe", m.key.Describe()}});
    }
    nlohmann::json j;
    j["gpu_model"] = m_profile ? m_profile->GpuModel() : std::string();
    j["profile"] = m_profile ? m_profile->File().string() : std::string();
    j["ops"] = ops;
    std::ofstream out(file);
    if (!out)
    {
        throw std::runtime_error(fmt::format("cannot write the missing ops to {}", file.string()));
    }
    out << j.dump(1) << "\n";
}

} // namespace phantora
