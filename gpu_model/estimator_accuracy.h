// How well the estimators (op_estimator.h) time the ops a profile lacks, by op class: each
// measured op is estimated by the same chain KernelCostTable runs, with its own
// measurement hidden (or every op its program measured, or, for recordings the profile
// never imported, nothing hidden), and compared with what it is charged when measured.
// Read by phantora-estimator-accuracy and tests/unit/estimator_accuracy_test.cc; the
// figures per class are the error band of an estimate of that class.
#pragma once

#include "gpu_model/cost_source.h"
#include "gpu_model/gpu_spec.h"
#include "gpu_model/op_class.h"
#include "gpu_model/profile/op_key.h"
#include "gpu_model/profile/profile_reader.h"
#include "gpu_model/profile/raw_log.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace phantora
{

/// One measured op estimated without its measurement.
struct EstimateCheck
{
    profile::OpKey key;
    OpClass cls{OpClass::OtherKernel};
    double measuredNs{0};           ///< what the op is charged when measured (OnStreamNs)
    int64_t launches{1};            ///< its samples: how often a program ran it
    std::optional<OpCost> estimate; ///< nullopt: no estimator applies (the default would)
    std::vector<OpCost> candidates; ///< every estimator's answer (OpEstimator::Candidates)
    double trafficBytes{-1};        ///< what kernel_traffic.h says it moves; -1: nothing
    /// The program whose ops were hidden (--leave program) or whose recording held it
    /// (held out, one log at a time); empty otherwise.
    std::string program;
    /// |estimate - measured| / measured; only with an estimate.
    double RelativeError() const;
};

enum class LeaveOut : uint8_t
{
    Op,      ///< each op from all the others
    Program, ///< each program's ops from the ops no run of it measured
};

/// Every measured op of \p profile taking at least \p minNs, estimated without what
/// \p leave hides.  A kernel is estimated with the launch arguments of its typical launch
/// (the set whose median is nearest its own).
std::vector<EstimateCheck> CheckProfile(const profile::ProfileReader& profile, const GpuSpec& gpu,
                                        LeaveOut leave, double minNs);

/// Every op of \p logs (recordings not imported into \p profile) that \p profile lacks,
/// taking at least \p minNs, estimated from \p profile; measured as the profile would
/// charge it (a kernel's median, a library call's 10th percentile).
std::vector<EstimateCheck> CheckHeldOut(const profile::ProfileReader& profile, const GpuSpec& gpu,
                                        const std::vector<profile::RawLog>& logs, double minNs);

/// What a program the profile never recorded is charged for the ops other programs did
/// measure: their samples, not its own.  For each program and each op it measured that
/// another program measured too, a check whose estimate (source Measured) is the median of
/// the other programs' figures (OnStreamNs: a kernel's median, a library call's 10th
/// percentile) and whose measurement is the program's own; \p program set.
std::vector<EstimateCheck> CheckMeasuredElsewhere(const profile::ProfileReader& profile,
                                                  double minNs);

struct ClassAccuracy
{
    OpClass cls{OpClass::OtherKernel};
    std::size_t n{0};           ///< ops estimated
    std::size_t unestimated{0}; ///< ops no estimator applied to (not in the errors)
    double medianAbsErr{0};     ///< relative, e.g. 0.12 for 12 %
    double meanAbsErr{0};
    double p90AbsErr{0};
    /// The estimated GPU time of the class over the measured one, each op weighted by its
    /// launches: whether the estimates charge a program's step too much or too little.
    double timeRatio{0};
    /// Ops estimated by each source (CostSource order).
    std::vector<std::size_t> bySource = std::vector<std::size_t>(kCostSources, 0);
};

/// One row per class that has an op in \p checks, in OpClass order.
std::vector<ClassAccuracy> Summarize(const std::vector<EstimateCheck>& checks);

} // namespace phantora
