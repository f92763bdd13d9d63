// How good are the estimates for ops a profile has not measured?  Each measured GEMM,
// kernel and copy of the committed profiles is estimated from the others (leave one
// out) and compared with its measured median.
#include "gpu_model/kernel_cost_table.h"
#include "gpu_model/op_estimator.h"
#include "gpu_model/profile/profile_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <vector>

using namespace phantora;
using namespace phantora::profile;

namespace
{

struct Errors
{
    std::vector<double> relative; ///< |estimate - measured| / measured

    double Median()
    {
        std::sort(relative.begin(), relative.end());
        return relative.empty() ? 0.0 : relative[relative.size() / 2];
    }
    double Mean() const
    {
        double s = 0;
        for (double e : relative)
            s += e;
        return relative.empty() ? 0.0 : s / static_cast<double>(relative.size());
    }
};

} // namespace

class EstimatorAccuracy : public ::testing::TestWithParam<std::string>
{
};

TEST_P(EstimatorAccuracy, LeaveOneOutErrorsOfTheCommittedProfile)
{
    const ProfileReader p(std::filesystem::path(PHANTORA_SOURCE_DIR) / "profiles" /
                          (GetParam() + ".sqlite"));
    GpuSpec gpu;
    gpu.model = GetParam();
    gpu.hbmBitsPerSecond = (GetParam() == "H200" ? 4.8e12 : 3.35e12) * 8;
    gpu.peakTflops = {{"bf16", 989.4}, {"f16", 989.4}, {"f32", 66.9}};
    const OpEstimator est(&p, gpu);
    std::map<OpKind, Errors> errors;
    for (const auto& [key, stats] : p.Ops())
    {
        // ops under 5 us are launch-latency bound: a relative error says little there
        if (stats.medianNs < 5000)
        {
            continue;
        }
        // against what the op itself is charged (a library call's lower decile)
        const double charged = stats.OnStreamNs({}, IsLibraryCall(key.kind));
        if (auto e = est.ShapeScaled(key))
        {
            errors[key.kind].relative.push_back(std::abs(static_cast<double>(*e) - charged) /
                                                charged);
        }
    }
    for (auto& [kind, e] : errors)
    {
        std::printf("%s %s: %zu ops estimated from the others, median error %.1f%%, mean %.1f%%\n",
                    GetParam().c_str(), OpKindName(kind), e.relative.size(), 100 * e.Median(),
                    100 * e.Mean());
    }
    // GEMM shapes of the transformer set are close together: scaling by flops from the
    // nearest shape must land within 25% for the typical one.
    ASSERT_GT(errors[OpKind::Gemm].relative.size(), 1000u);
    EXPECT_LT(errors[OpKind::Gemm].Median(), 0.25);
}

INSTANTIATE_TEST_SUITE_P(Profiles, EstimatorAccuracy, ::testing::Values("H100", "H200"));
