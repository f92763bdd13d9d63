// How well one measured GPU's ops predict another's (gpu_model/gpu_prediction.h), op by op:
// every op both profiles measured (the same kernel at the same launch shape, the same GEMM,
// cuDNN call or copy), its source time scaled to the target's datasheet against the
// target's own measurement; errors by predicted class and by op kind, each weighted by the
// target's measured time (how the ops add up in a step), and the time-weighted total.
//
//   build/bench/phantora-prediction-accuracy --source profiles/H100.sqlite
//       --source-sheet scenarios/gpus/H100.toml --target profiles/H200.sqlite
//       --target-sheet scenarios/gpus/H200.toml
#include "gpu_model/gpu_prediction.h"
#include "gpu_model/profile/profile_reader.h"
#include "scenario_loader.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <string>

namespace
{

using namespace phantora;

/// A datasheet file (a [gpu] table) as the scenario reader reads it: a scenario that
/// extends it, with the tables a scenario must have.
GpuSpec ReadSheet(const std::filesystem::path& sheet)
{
    const auto tmp =
        std::filesystem::temp_directory_path() /
        fmt::format("phantora-sheet-{}.toml", std::hash<std::string>{}(sheet.string()));
    {
        std::FILE* f = std::fopen(tmp.c_str(), "w");
        if (!f)
            throw std::runtime_error("cannot write " + tmp.string());
        std::fprintf(
            f,
            "extends = \"%s\"\n[topology]\nkind = \"switch\"\ngpus = 1\n"
            "link_bandwidth = \"1GB/s\"\nlink_latency = \"1us\"\n[kernels]\ndefault = \"1us\"\n",
            std::filesystem::absolute(sheet).c_str());
        std::fclose(f);
    }
    const GpuSpec gpu = LoadScenario(tmp).gpu;
    std::filesystem::remove(tmp);
    return gpu;
}

struct Sum
{
    int ops{0};
    double measuredNs{0};
    double predictedNs{0};
    double absErrNs{0}; ///< sum of |predicted - measured| over ops
};

void Print(const char* what, const std::map<std::string, Sum>& sums)
{
    std::printf("%-12s %6s %14s %14s %10s %10s\n", what, "ops", "target ms", "predicted ms",
                "sum err %", "op |err| %");
    for (const auto& [name, s] : sums)
    {
        std::printf("%-12s %6d %14.3f %14.3f %+10.1f %10.1f\n", name.c_str(), s.ops,
                    s.measuredNs / 1e6, s.predictedNs / 1e6,
                    100.0 * (s.predictedNs - s.measuredNs) / s.measuredNs,
                    100.0 * s.absErrNs / s.measuredNs);
    }
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"Op-level accuracy of predicting one GPU from another's profile"};
    std::string source, target, sourceSheet, targetSheet;
    app.add_option("--source", source, "the measured profile that predicts")->required();
    app.add_option("--source-sheet", sourceSheet, "its GPU's datasheet (scenarios/gpus/)")
        ->required();
    app.add_option("--target", target, "the profile of the GPU predicted, its measurements")
        ->required();
    app.add_option("--target-sheet", targetSheet, "that GPU's datasheet")->required();
    CLI11_PARSE(app, argc, argv);
    try
    {
        const profile::ProfileReader src{std::filesystem::path(source)};
        const profile::ProfileReader tgt{std::filesystem::path(target)};
        const GpuSpec srcGpu = ReadSheet(sourceSheet);
        const GpuSpec tgtGpu = ReadSheet(targetSheet);
        const GpuPrediction prediction(srcGpu, tgtGpu, GpuPrediction::LatencyFloorNs(src));
        std::map<std::string, Sum> byClass, byKind;
        Sum all;
        for (const auto& [key, stats] : tgt.Ops())
        {
            const profile::OpStats* s = src.Find(key);
            if (!s)
                continue;
            const bool span = profile::IsLibraryCall(key.kind);
            const double measured = stats.OnStreamNs({}, span);
            const PredictedCost p = prediction.Scale(key, s->OnStreamNs({}, span));
            for (Sum* sum : {&byClass[PredictedClassName(p.cls)],
                             &byKind[profile::OpKindName(key.kind)], &all})
            {
                ++sum->ops;
                sum->measuredNs += measured;
                sum->predictedNs += p.ns;
                sum->absErrNs += std::abs(p.ns - measured);
            }
        }
        std::printf(
            "%s predicted from %s (floor %.2f us): the ops both profiles measured, each once\n",
            tgtGpu.model.c_str(), srcGpu.model.c_str(), prediction.LatencyFloor() / 1e3);
        Print("class", byClass);
        Print("kind", byKind);
        Print("all", {{"all", all}});
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "phantora-prediction-accuracy: %s\n", e.what());
        return 1;
    }
    return 0;
}
