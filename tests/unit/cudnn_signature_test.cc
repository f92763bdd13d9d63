// cuDNN op signatures read back (gpu_model/profile/cudnn_signature.h): the round trip, the work
// the estimator scales by, and what counts as the same family.
#include "gpu_model/profile/cudnn_signature.h"

#include <gtest/gtest.h>

using namespace phantora::profile;

namespace
{

const std::string kFprop =
    "cudnnSdpaFprop(b=8,h=16,h_kv=16,s_q=1024,s_kv=1024,d_qk=64,d_v=64,type=bf16,layout=bshd,"
    "causal=1,bias=0,padding=0,dropout=0,scale=1,stats=1)";
const std::string kConv =
    "cudnnConvFprop(x=32x64x56x56,w=128x64x3x3,y=32x128x28x28,pad=1x1,"
    "stride=2x2,dilation=1x1,type=bf16,compute=f32,layout=nhwc,epilogue=none)";

} // namespace

TEST(CudnnSignature, ParsesAndWritesBackTheSameName)
{
    for (const std::string& name :
         {kFprop, kConv,
          std::string(
              "cudnnBatchNormFwdTraining(x=32x64x56x56,type=f32,layout=nchw,mode=spatial)")})
    {
        const auto s = CudnnSignature::Parse(name);
        ASSERT_TRUE(s) << name;
        EXPECT_EQ(s->Name(), name);
    }
    const auto s = CudnnSignature::Parse(kConv);
    EXPECT_EQ(s->Class(), CudnnOpClass::Convolution);
    EXPECT_EQ(s->Dims("w"), (std::vector<int64_t>{128, 64, 3, 3}));
    EXPECT_EQ(s->Type(), "bf16");
}

TEST(CudnnSignature, RefusesWhatIsNoCudnnOpOfOurs)
{
    EXPECT_FALSE(
        CudnnSignature::Parse("cublasGemmEx(m=1,n=1,k=1,op=NN,a=f32,b=f32,c=f32,batch=1)"));
    EXPECT_FALSE(CudnnSignature::Parse("cudnnSdpaFprop(b=8,h=16)")); // no shape, no type
    EXPECT_FALSE(CudnnSignature::Parse("cudnnConvFprop(x=8x3x4x4,w=1x3x3,y=8x1x2x2,type=f32)"));
    EXPECT_FALSE(CudnnSignature::Parse("cudnnSdpaFprop"));
}

TEST(CudnnSignature, AttentionFlopsAreHalvedWhenCausalAndTwoAndAHalfTimesBackward)
{
    const auto f = *CudnnSignature::Parse(kFprop);
    // 4 * b * h * s^2 * d, halved by the causal mask
    EXPECT_DOUBLE_EQ(f.Flops(), 4.0 * 8 * 16 * 1024 * 1024 * 64 / 2);
    std::string full = kFprop;
    full.replace(full.find("causal=1"), 8, "causal=0");
    EXPECT_DOUBLE_EQ(CudnnSignature::Parse(full)->Flops(), 4.0 * 8 * 16 * 1024 * 1024 * 64);
    std::string back = kFprop;
    back.replace(0, std::string("cudnnSdpaFprop").size(), "cudnnSdpaBprop");
    EXPECT_DOUBLE_EQ(CudnnSignature::Parse(back)->Flops(), 2.5 * f.Flops());
    // Q, K, V and O once each, two bytes an element
    EXPECT_DOUBLE_EQ(f.Bytes(), 2.0 * 4 * 8 * 16 * 1024 * 64);
    EXPECT_DOUBLE_EQ(CudnnSignature::Parse(back)->Bytes(), 2 * f.Bytes());
}

TEST(CudnnSignature, ConvolutionFlopsCountEveryOutputsProducts)
{
    const auto c = *CudnnSignature::Parse(kConv);
    EXPECT_DOUBLE_EQ(c.Flops(), 2.0 * (32 * 128 * 28 * 28) * (64 * 3 * 3));
    EXPECT_DOUBLE_EQ(c.Bytes(), 2.0 * (32 * 64 * 56 * 56 + 128 * 64 * 3 * 3 + 32 * 128 * 28 * 28));
    // grouped: each output channel sees C/groups inputs (w's second dim)
    const auto depthwise = *CudnnSignature::Parse(
        "cudnnConvFprop(x=1x32x8x8,w=32x1x3x3,y=1x32x8x8,pad=1x1,stride=1x1,dilation=1x1,"
        "type=f32,compute=f32,layout=nchw,epilogue=none)");
    EXPECT_DOUBLE_EQ(depthwise.Flops(), 2.0 * (32 * 8 * 8) * 9);
}

TEST(CudnnSignature, BatchNormMovesItsInputSeveralTimes)
{
    const auto fwd = *CudnnSignature::Parse(
        "cudnnBatchNormFwdTraining(x=2x3x4x5,type=f32,layout=nchw,mode=spatial)");
    EXPECT_DOUBLE_EQ(fwd.Flops(), 0.0);
    EXPECT_DOUBLE_EQ(fwd.Bytes(), 3.0 * 4 * 120);
    const auto bwd =
        *CudnnSignature::Parse("cudnnBatchNormBwd(x=2x3x4x5,type=bf16,layout=nhwc,mode=spatial)");
    EXPECT_DOUBLE_EQ(bwd.Bytes(), 5.0 * 2 * 120);
}

TEST(CudnnSignature, TheFamilyIsEverythingButTheShape)
{
    const auto f = *CudnnSignature::Parse(kFprop);
    EXPECT_EQ(f.Family(), "cudnnSdpaFprop(type=bf16,layout=bshd,causal=1,bias=0,padding=0,"
                          "dropout=0,scale=1,stats=1)");
    EXPECT_EQ(f.Shape(), (std::vector<double>{8, 16, 16, 1024, 1024, 64, 64}));
    const auto c = *CudnnSignature::Parse(kConv);
    EXPECT_EQ(c.Family(), "cudnnConvFprop(pad=1x1,stride=2x2,dilation=1x1,type=bf16,compute=f32,"
                          "layout=nhwc,epilogue=none)");
    EXPECT_EQ(c.Shape().size(), 12u);
}
