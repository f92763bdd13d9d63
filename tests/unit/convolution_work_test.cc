// A convolution's work from its signature (gpu_model/convolution_work.h): the implicit
// GEMM of each pass, the tensor cores' padded flops, the bytes with and without NCHW's
// transposes, the tile efficiency.
#include "gpu_model/convolution_work.h"
#include "gpu_model/profile/cudnn_signature.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace phantora;
using namespace phantora::profile;

namespace
{

ConvolutionWork Work(const std::string& api, const std::string& x, const std::string& w,
                     const std::string& y, const std::string& stride, const std::string& type,
                     const std::string& layout)
{
    const std::string name = fmt::format(
        "{}(x={},w={},y={},pad=1x1,stride={},dilation=1x1,type={},compute=f32,layout={},"
        "epilogue=none)",
        api, x, w, y, stride, type, layout);
    const auto s = CudnnSignature::Parse(name);
    EXPECT_TRUE(s) << name;
    const auto c = ConvolutionWork::Of(*s);
    EXPECT_TRUE(c) << name;
    return *c;
}

} // namespace

TEST(ConvolutionWork, EachPassIsItsOwnImplicitGemmOfTheSameFlops)
{
    // ResNet's 3x3 64->64 layer at batch 32: forward (32*56*56) x 64 over 64*9
    const auto f =
        Work("cudnnConvFprop", "32x64x56x56", "64x64x3x3", "32x64x56x56", "1x1", "bf16", "nhwc");
    EXPECT_EQ(f.pass, ConvolutionWork::Pass::Forward);
    EXPECT_DOUBLE_EQ(f.GemmM(), 32.0 * 56 * 56);
    EXPECT_DOUBLE_EQ(f.GemmN(), 64);
    EXPECT_DOUBLE_EQ(f.GemmK(), 64.0 * 9);
    EXPECT_DOUBLE_EQ(f.Flops(), 2 * f.GemmM() * f.GemmN() * f.GemmK());
    // backward filter: 64 x (64*9) summed over every output pixel of the batch
    const auto wg =
        Work("cudnnConvWgrad", "32x64x56x56", "64x64x3x3", "32x64x56x56", "1x1", "bf16", "nhwc");
    EXPECT_DOUBLE_EQ(wg.GemmM(), 64);
    EXPECT_DOUBLE_EQ(wg.GemmN(), 64.0 * 9);
    EXPECT_DOUBLE_EQ(wg.GemmK(), 32.0 * 56 * 56);
    // backward data of a stride-2 layer: every input pixel, K*R*S over the stride's share
    const auto dg =
        Work("cudnnConvDgrad", "32x64x56x56", "128x64x3x3", "32x128x28x28", "2x2", "bf16", "nhwc");
    EXPECT_DOUBLE_EQ(dg.GemmM(), 32.0 * 56 * 56);
    EXPECT_DOUBLE_EQ(dg.GemmN(), 64);
    EXPECT_DOUBLE_EQ(2 * dg.GemmM() * dg.GemmN() * dg.GemmK(), dg.Flops());
    EXPECT_DOUBLE_EQ(dg.Flops(), 2.0 * 32 * 128 * 28 * 28 * 64 * 9);
}

TEST(ConvolutionWork, AFirstLayersThreeColoursArePaddedToAnOperandVector)
{
    const auto bf16 =
        Work("cudnnConvFprop", "32x3x224x224", "64x3x7x7", "32x64x112x112", "2x2", "bf16", "nhwc");
    EXPECT_TRUE(bf16.SmallChannels());
    EXPECT_DOUBLE_EQ(bf16.TensorCoreFlops(), bf16.Flops() * 8 / 3); // 8 bf16 in 16 bytes
    const auto f32 =
        Work("cudnnConvFprop", "32x3x224x224", "64x3x7x7", "32x64x112x112", "2x2", "f32", "nchw");
    EXPECT_TRUE(f32.SmallChannels());
    EXPECT_DOUBLE_EQ(f32.TensorCoreFlops(), f32.Flops() * 4 / 3); // 4 tf32 in 16 bytes
    const auto wide =
        Work("cudnnConvFprop", "32x64x56x56", "64x64x3x3", "32x64x56x56", "1x1", "bf16", "nhwc");
    EXPECT_FALSE(wide.SmallChannels());
    EXPECT_DOUBLE_EQ(wide.TensorCoreFlops(), wide.Flops());
}

TEST(ConvolutionWork, DepthwiseHasNoGemmForTensorCores)
{
    const auto dw =
        Work("cudnnConvFprop", "64x96x56x56", "96x1x7x7", "64x96x56x56", "1x1", "bf16", "nhwc");
    EXPECT_DOUBLE_EQ(dw.groups, 96);
    EXPECT_TRUE(dw.Depthwise());
    EXPECT_FALSE(dw.SmallChannels());
    EXPECT_DOUBLE_EQ(dw.Flops(), 2.0 * 64 * 96 * 56 * 56 * 49);
}

TEST(ConvolutionWork, NchwOnTensorCoresTransposesButAPointwiseLayerIsAGemmAlready)
{
    const double x = 64.0 * 256 * 56 * 56, y = 64.0 * 64 * 56 * 56;
    const auto pointwise =
        Work("cudnnConvFprop", "64x256x56x56", "64x256x1x1", "64x64x56x56", "1x1", "f32", "nchw");
    EXPECT_TRUE(pointwise.Pointwise());
    EXPECT_DOUBLE_EQ(pointwise.Bytes(), 4 * (x + 64.0 * 256 + y));
    const auto nhwc =
        Work("cudnnConvFprop", "64x256x56x56", "64x256x3x3", "64x64x56x56", "1x1", "f32", "nhwc");
    EXPECT_DOUBLE_EQ(nhwc.Bytes(), 4 * (x + 64.0 * 256 * 9 + y));
    const auto nchw =
        Work("cudnnConvFprop", "64x256x56x56", "64x256x3x3", "64x64x56x56", "1x1", "f32", "nchw");
    EXPECT_DOUBLE_EQ(nchw.Bytes(), nhwc.Bytes() + 4 * 2 * (x + y));
    // f32 runs on TF32 tensor cores: the bf16 GEMMs' time, twice
    EXPECT_EQ(nchw.GemmType(), "bf16");
    EXPECT_DOUBLE_EQ(nchw.GemmTimeScale(), 2.0);
}

TEST(ConvolutionWork, TilesHalfEmptyAndALastWaveOfFewTilesWasteTheTensorCores)
{
    // 64 output channels fill half of a 128-wide tile; 784 tiles on 132 SMs: 6 waves,
    // the last holding 124 of 132
    const auto f =
        Work("cudnnConvFprop", "32x64x56x56", "64x64x3x3", "32x64x56x56", "1x1", "bf16", "nhwc");
    EXPECT_NEAR(f.TileEfficiency(132), 0.5 * 784.0 / (6 * 132), 1e-12);
    // backward filter: split over the SMs along its long sum, only the tiles' fill counts
    const auto w =
        Work("cudnnConvWgrad", "32x64x56x56", "64x64x3x3", "32x64x56x56", "1x1", "bf16", "nhwc");
    EXPECT_NEAR(w.TileEfficiency(132), 0.5 * (576.0 / 640.0), 1e-12);
}
