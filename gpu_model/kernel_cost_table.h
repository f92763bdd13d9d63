// Durations of the GPU ops on the timeline: kernels, GEMMs, copies and memsets.
// In order: the scenario's [kernels.durations] (the user's word wins), the measured
// profile ([kernels] profile, gpu_profiler/: a measured op always takes its measurement),
// an estimate (OpEstimator::Estimate, op_estimator.h: the same kernel scaled along the
// bandwidth curve where its arguments say its bytes, the same op at other shapes, a
// memory-bound kernel's bytes at the measured bandwidth, the same template's other
// kernels, the GPU's roofline), a copy's bandwidth model from the scenario, the
// scenario's default.  A miss is never fatal; every op is counted by where its duration
// came from, so the report can say what share of the simulated GPU time was measured.
#pragma once

#include "gpu_model/cost_source.h"
#include "gpu_model/gpu_prediction.h"
#include "gpu_model/gpu_spec.h"
#include "gpu_model/op_estimator.h"
#include "gpu_model/profile/profile_reader.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace phantora
{

class KernelCostTable
{
public:
    /// Opens \p kernels' profiles if it names any; throws profile::ProfileError if one
    /// cannot be read or was measured on another GPU model than \p gpu's (or, where
    /// \p kernels has profile_of, than that datasheet's: \p gpu is then predicted from
    /// it, gpu_prediction.h).  \p describedBy
    /// (the scenario file) names where \p gpu was given, in that error.  Both specs must
    /// outlive the table.
    KernelCostTable(const GpuSpec& gpu, const KernelSpec& kernels,
                    const std::filesystem::path& describedBy = {});

    /// A measured kernel takes the median of its samples launched with the same arguments
    /// (kernel_params.h ArgFacts) where the profile has some; any other measured op takes
    /// the median of \p program's own samples where the profile has some
    /// (profile::ProgramName of the simulated command), else of all samples.
    void PreferProgram(std::string program) { m_program = std::move(program); }
    const std::string& PreferredProgram() const { return m_program; }
    /// Measured ops whose duration came from the preferred program's own samples.
    uint64_t FromProgram() const { return m_fromProgram; }
    /// Measured kernels whose duration came from samples launched with their arguments.
    uint64_t FromArgs() const { return m_fromArgs; }
    /// GPU time of measured ops the preferred program never ran itself: their samples are
    /// other programs' (a program the profile holds no recording of takes all its
    /// measured ops so), which the error band weighs apart (error_band.h).
    int64_t MeasuredElsewhereNs() const { return m_measuredElsewhereNs; }

    /// A kernel launch, GEMM or cuDNN call (profile::KeyForLaunch), with the launch's
    /// argument facts (kernel_params.h ArgFacts) where the interposer read them, and what
    /// its struct arguments say of its work (kernel_work.h WorkFacts: for estimates).
    OpCost Kernel(const profile::OpKey& key, const std::string& args = {},
                  const std::string& work = {});
    /// A copy or memset (profile::KeyForCopy); \p modelNs: the scenario's bandwidth model
    /// of it, used when not measured; \p pinnedHost: a host copy from or to pinned memory,
    /// estimated from the profile's pinned copies (the profile's key does not tell them
    /// apart: a measured copy takes its measurement either way).
    OpCost Copy(const profile::OpKey& key, int64_t modelNs, bool pinnedHost = false);
    /// A launch known by name alone (no launch shape).
    int64_t DurationNs(std::string_view kernelName);

    struct Totals
    {
        uint64_t ops{0};
        int64_t ns{0};
    };
    const std::array<Totals, kCostSources>& BySource() const { return m_totals; }
    /// Share of the simulated GPU time (ops timed here) whose duration was measured or
    /// given by the scenario's table, in [0, 1]; 1 when nothing ran.
    double MeasuredShare() const;

    struct Miss
    {
        profile::OpKey key;
        uint64_t count{0};
        int64_t ns{0};
        CostSource source{CostSource::Default};
        int64_t perLaunchNs{0}; ///< the first launch's estimate
    };
    /// Ops timed by an estimate or the default, the largest total time first.
    std::vector<Miss> Misses() const;
    /// The missing-ops file `gpu_profiler replay --missing` reads.
    void WriteMissing(const std::filesystem::path& file) const;

    const profile::ProfileReader* Profile() const { return m_profile.get(); }

    /// Where the scenario's GPU is predicted from another's profile: how; else null.
    const GpuPrediction* Prediction() const { return m_prediction.get(); }
    struct PredictedTotals
    {
        uint64_t ops{0};
        double sourceNs{0}; ///< what they took on the measured GPU
        double ns{0};       ///< predicted on the scenario's
    };
    /// The ops priced from the profile (measured or estimated), by what scaled them.
    const std::array<PredictedTotals, kPredictedClasses>& ByPredictedClass() const
    {
        return m_predicted;
    }

    // Counters of the scenario-table era, kept for the report's "kernels" object.
    uint64_t Hits() const;
    uint64_t DefaultedCount() const { return m_totals[size_t(CostSource::Default)].ops; }
    const std::map<std::string, uint64_t>& MissedKernels() const { return m_defaulted; }

private:
    OpCost Lookup(const profile::OpKey& key, int64_t modelNs, const std::string& args = {},
                  const std::string& work = {});
    /// \p c, a time on the profile's GPU, on the scenario's (no prediction: as is).
    OpCost Predicted(const profile::OpKey& key, OpCost c, const std::string& args,
                     const std::string& work);
    std::optional<int64_t> FromTable(std::string_view name) const;

    const KernelSpec& m_spec;
    std::unique_ptr<profile::ProfileReader> m_profile;
    OpEstimator m_estimator;
    std::unique_ptr<GpuPrediction> m_prediction;
    std::array<PredictedTotals, kPredictedClasses> m_predicted{};
    std::array<Totals, kCostSources> m_totals{};
    std::map<profile::OpKey, Miss> m_misses;
    /// Estimates are searched once per op and launch facts, then reused.
    struct Estimated
    {
        OpCost cost;
        bool fromProfile{false}; ///< the estimator's (the profile's GPU's time)
    };
    std::map<std::tuple<profile::OpKey, std::string, std::string>, Estimated> m_estimates;
    std::map<std::string, uint64_t> m_defaulted;
    std::string m_program;
    uint64_t m_fromProgram{0};
    uint64_t m_fromArgs{0};
    int64_t m_measuredElsewhereNs{0};
};

} // namespace phantora
