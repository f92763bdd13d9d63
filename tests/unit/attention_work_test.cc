// A fused attention call's work (gpu_model/attention_work.h) and its time model: fixed
// cost, matrix flops and softmax scores, each term non-negative, fitted to measured calls.
#include "gpu_model/attention_work.h"
#include "gpu_model/profile/cudnn_signature.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace phantora;
using namespace phantora::profile;

namespace
{

AttentionWork Work(const char* api, int64_t b, int64_t h, int64_t seq, int64_t d, int causal,
                   const char* type = "bf16", int dropout = 0)
{
    const std::string name = fmt::format(
        "{}(b={},h={},h_kv={},s_q={},s_kv={},d_qk={},d_v={},type={},layout=bshd,causal={},"
        "bias=0,padding=0,dropout={},scale=1)",
        api, b, h, h, seq, seq, d, d, type, causal, dropout);
    const auto s = CudnnSignature::Parse(name);
    EXPECT_TRUE(s) << name;
    const auto w = AttentionWork::Of(*s);
    EXPECT_TRUE(w) << name;
    return *w;
}

// 20 us a call, 1 ns per 1000 flops (1000 TFLOP/s), 0.5 ns per score.
double Truth(const AttentionWork& w)
{
    return 20000 + w.flops / 1000 + 0.5 * w.scores;
}

} // namespace

TEST(AttentionWork, ScoresAreTheSoftmaxMatrixHalvedWhenCausal)
{
    const auto w = Work("cudnnSdpaFprop", 8, 16, 1024, 64, 1);
    EXPECT_DOUBLE_EQ(w.scores, 8.0 * 16 * 1024 * 1024 / 2);
    EXPECT_DOUBLE_EQ(w.flops, 4.0 * 8 * 16 * 1024 * 1024 * 64 / 2);
    EXPECT_FALSE(w.backward);
    EXPECT_EQ(w.typeGroup, "half");
    EXPECT_TRUE(w.SameModel(Work("cudnnSdpaFprop", 1, 1, 128, 128, 0, "f16")));
    EXPECT_FALSE(w.SameModel(Work("cudnnSdpaBprop", 8, 16, 1024, 64, 1)));
    EXPECT_FALSE(w.SameModel(Work("cudnnSdpaFprop", 8, 16, 1024, 64, 1, "f32")));
}

// Calls that differ in head dimension at one sequence (flops apart, scores equal) and in
// sequence at one head dimension tell the three terms apart: the fit finds them and prices
// a shape none of them had.
TEST(AttentionWork, TheFitRecoversEachTermAndPricesAnotherShape)
{
    std::vector<AttentionTimeModel::Point> points;
    for (const auto& w :
         {Work("cudnnSdpaFprop", 8, 8, 512, 64, 1), Work("cudnnSdpaFprop", 8, 16, 1024, 64, 1),
          Work("cudnnSdpaFprop", 8, 16, 2048, 16, 1), Work("cudnnSdpaFprop", 8, 16, 1024, 128, 1)})
        points.push_back({w, Truth(w)});
    const auto m = AttentionTimeModel::Fit(points);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->Terms()[0], 20000, 1);
    EXPECT_NEAR(m->Terms()[1], 1e-3, 1e-9);
    EXPECT_NEAR(m->Terms()[2], 0.5, 1e-6);
    EXPECT_DOUBLE_EQ(m->Terms()[3], 0); // no dropout call measured: no such term
    const auto target = Work("cudnnSdpaFprop", 32, 12, 512, 64, 0);
    EXPECT_NEAR(m->TimeNs(target), Truth(target), 1);
}

// A term the data would make negative is left out (no op is faster for more work), and
// fewer than three calls give no model at all.
TEST(AttentionWork, NoTermIsNegativeAndTooFewCallsGiveNoModel)
{
    std::vector<AttentionTimeModel::Point> points;
    const auto a = Work("cudnnSdpaFprop", 8, 8, 512, 64, 1);
    const auto b = Work("cudnnSdpaFprop", 8, 16, 1024, 64, 1);
    const auto c = Work("cudnnSdpaFprop", 8, 16, 2048, 16, 1);
    // the small call slower than its flops and scores allow beside the others
    points.push_back({a, 28752});
    points.push_back({b, 62655});
    EXPECT_FALSE(AttentionTimeModel::Fit(points));
    points.push_back({c, 199454});
    const auto m = AttentionTimeModel::Fit(points);
    ASSERT_TRUE(m);
    for (double t : m->Terms())
        EXPECT_GE(t, 0);
    for (const auto& p : points)
        EXPECT_NEAR(m->TimeNs(p.work) / p.ns, 1.0, 0.25);
}
