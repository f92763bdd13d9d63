// Durations of cuDNN ops: measured where the profile has their signature, else scaled from
// the nearest measured op of the same API and type (attention by flops, batch norm by
// bytes, a small-channel convolution from a recorded one), else by their work (other
// convolutions) or the roofline; a scenario's table names them by API.
#include "cost_table_calls.h"
#include "gpu_model/convolution_work.h"
#include "gpu_model/kernel_cost_table.h"
#include "gpu_model/profile/cudnn_signature.h"
#include "gpu_model/profile/profile_writer.h"
#include "scenario.h"

#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace phantora;
using namespace phantora::profile;
namespace fs = std::filesystem;

namespace
{

std::string Sdpa(const char* api, int64_t seq, int causal)
{
    return fmt::format("{}(b=8,h=16,h_kv=16,s_q={},s_kv={},d_qk=64,d_v=64,type=bf16,layout=bshd,"
                       "causal={},bias=0,padding=0,dropout=0,scale=1{})",
                       api, seq, seq, causal,
                       std::string_view(api) == "cudnnSdpaFprop" ? ",stats=1" : "");
}

std::string Conv(int64_t batch)
{
    return fmt::format("cudnnConvFprop(x={0}x64x56x56,w=64x64x3x3,y={0}x64x56x56,pad=1x1,"
                       "stride=1x1,dilation=1x1,type=bf16,compute=f32,layout=nhwc,epilogue=none)",
                       batch);
}

std::string BatchNorm(int64_t batch)
{
    return fmt::format("cudnnBatchNormFwdTraining(x={}x64x56x56,type=f32,layout=nchw,mode=spatial)",
                       batch);
}

wire::KernelLaunch Launch(const std::string& name)
{
    wire::KernelLaunch k;
    k.name = name;
    return k;
}

class CudnnCostTest : public ::testing::Test
{
protected:
    void SetUp() override
    {
        dir = fs::temp_directory_path() / ("phantora-cudnn-cost-" + std::to_string(getpid()));
        fs::create_directories(dir);
        scenario.file = dir / "s.toml";
        scenario.gpu.model = "H200";
        scenario.gpu.hbmBitsPerSecond = 4.8e12 * 8;
        scenario.gpu.peakTflops["bf16"] = 1000.0;
        scenario.kernels.defaultNs = 7000;
        scenario.kernels.profile = dir / "H200.sqlite";
        fs::remove(scenario.kernels.profile);
        ProfileWriter w(scenario.kernels.profile);
        w.SetMetadata("gpu_model", "H200");
        auto add = [&w](const std::string& name, std::vector<int64_t> ns)
        {
            OpKey k = KeyForLaunch(name, {}, {}, 0);
            ASSERT_EQ(k.kind, OpKind::Cudnn) << name;
            w.AddSamples(k, ns, "t", "record");
        };
        add(Sdpa("cudnnSdpaFprop", 1024, 1), {499000, 500000, 501000});
        add(Conv(32), {300000});
        add(BatchNorm(32), {80000});
        w.Commit();
    }
    void TearDown() override { fs::remove_all(dir); }
    fs::path dir;
    Scenario scenario;
};

} // namespace

// A cuDNN call is a library call: its span with the recorder's host ahead, the lower
// decile of its samples (OpStats::OnStreamNs).
TEST_F(CudnnCostTest, AMeasuredSignatureTakesItsLowerDecile)
{
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost c = test::PriceLaunch(t, Launch(Sdpa("cudnnSdpaFprop", 1024, 1)));
    EXPECT_EQ(c.source, CostSource::Measured);
    EXPECT_EQ(c.ns, 499200);
}

TEST_F(CudnnCostTest, AttentionAtAnotherLengthScalesByItsFlops)
{
    KernelCostTable t(scenario.gpu, scenario.kernels);
    // twice the sequence: four times the score matrix
    const OpCost longer = test::PriceLaunch(t, Launch(Sdpa("cudnnSdpaFprop", 2048, 1)));
    EXPECT_EQ(longer.source, CostSource::ShapeScaled);
    EXPECT_EQ(longer.ns, 4 * 499200);
    // without the causal mask: another family, the only one measured, twice the work
    const OpCost full = test::PriceLaunch(t, Launch(Sdpa("cudnnSdpaFprop", 1024, 0)));
    EXPECT_EQ(full.source, CostSource::ShapeScaled);
    EXPECT_EQ(full.ns, 2 * 499200);
}

TEST_F(CudnnCostTest, AnUnmeasuredApiFallsToTheRoofline)
{
    KernelCostTable t(scenario.gpu, scenario.kernels);
    // no backward pass measured: 2.5 x the causal forward's 4*8*16*1024^2*64/2 flops at
    // 1000 TFLOP/s (42.95 us), longer than its 134 MB at 4.8 TB/s (27.96 us)
    const OpCost back = test::PriceLaunch(t, Launch(Sdpa("cudnnSdpaBprop", 1024, 1)));
    EXPECT_EQ(back.source, CostSource::Roofline);
    EXPECT_EQ(back.ns, 42950);
    const auto misses = t.Misses();
    ASSERT_EQ(misses.size(), 1u);
    EXPECT_EQ(misses[0].key.kind, OpKind::Cudnn);
}

// A convolution is priced by its work (convolution_work.h), not scaled from another
// shape: with no GEMM measured, its tensor-core flops at the peak over the share of the
// tiles it fills, or its bytes at the HBM bandwidth, whichever is longer; plus what the
// recorded convolution of its pass, type and layout took beyond its own work.
TEST_F(CudnnCostTest, ConvolutionsArePricedByTheirWorkAndBatchNormScalesByBytes)
{
    KernelCostTable t(scenario.gpu, scenario.kernels);
    auto work = [&](int64_t batch)
    {
        const auto c = *ConvolutionWork::Of(*CudnnSignature::Parse(Conv(batch)));
        const double compute = c.TensorCoreFlops() / 1e15 * 1e9 / c.TileEfficiency(132);
        const double memory = c.Bytes() * 8 / scenario.gpu.hbmBitsPerSecond * 1e9;
        return std::max(compute, memory);
    };
    const OpCost conv = test::PriceLaunch(t, Launch(Conv(64)));
    EXPECT_EQ(conv.source, CostSource::Roofline);
    EXPECT_NEAR(static_cast<double>(conv.ns), work(64) + (300000 - work(32)), 1.0);
    EXPECT_LT(conv.ns, 2 * 300000); // not the recorded batch 32 scaled by its flops
    const OpCost bn = test::PriceLaunch(t, Launch(BatchNorm(8)));
    EXPECT_EQ(bn.source, CostSource::ShapeScaled);
    EXPECT_EQ(bn.ns, 20000);
}

// A first layer's 3 channels: its recorded small-channel convolution, by flops.
TEST_F(CudnnCostTest, ASmallChannelConvolutionScalesFromTheRecordedOne)
{
    const std::string stem = "cudnnConvFprop(x={}x3x224x224,w=64x3x7x7,y={}x64x112x112,pad=3x3,"
                             "stride=2x2,dilation=1x1,type=bf16,compute=f32,layout=nhwc,"
                             "epilogue=none)";
    {
        ProfileWriter w(scenario.kernels.profile);
        w.AddSamples(KeyForLaunch(fmt::format(fmt::runtime(stem), 32, 32), {}, {}, 0), {290000},
                     "t", "record");
        w.Commit();
    }
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost c = test::PriceLaunch(t, Launch(fmt::format(fmt::runtime(stem), 128, 128)));
    EXPECT_EQ(c.source, CostSource::ShapeScaled);
    EXPECT_EQ(c.ns, 4 * 290000);
}

TEST_F(CudnnCostTest, NeverFasterThanTheRoofline)
{
    scenario.gpu.peakTflops["bf16"] = 1.0; // a slow GPU: the measured H200 time is too fast
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const auto sig = *CudnnSignature::Parse(Sdpa("cudnnSdpaFprop", 2048, 1));
    const OpCost c = test::PriceLaunch(t, Launch(sig.Name()));
    EXPECT_EQ(c.source, CostSource::ShapeScaled);
    EXPECT_EQ(c.ns, std::llround(sig.Flops() / 1e12 * 1e9));
}

TEST_F(CudnnCostTest, TheScenarioTableNamesThemByApi)
{
    scenario.kernels.durationsNs["cudnnSdpaBprop"] = 1234;
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost c = test::PriceLaunch(t, Launch(Sdpa("cudnnSdpaBprop", 4096, 0)));
    EXPECT_EQ(c.source, CostSource::Table);
    EXPECT_EQ(c.ns, 1234);
}
