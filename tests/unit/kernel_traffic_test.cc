// The bytes a memory-bound kernel moves, read from its launch (kernel_traffic.h), and the
// class each kernel is counted in (op_class.h).
#include "gpu_model/kernel_name_parts.h"
#include "gpu_model/kernel_traffic.h"
#include "gpu_model/op_class.h"

#include <gtest/gtest.h>

using namespace phantora;
using profile::OpKey;

namespace
{

OpKey Launch(const std::string& name, uint32_t grid, uint32_t block, uint32_t gridY = 1)
{
    return profile::KeyForLaunch(name, {grid, gridY, 1}, {block, 1, 1}, 0);
}

const std::string kMulBf16 =
    "void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<c10::BFloat16, "
    "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, "
    "std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)";
const std::string kCastToBf16 =
    "void at::native::vectorized_elementwise_kernel<8, "
    "at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, "
    "std::array<char*, 2ul> >(int, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)"
    "::{lambda(float)#1}, std::array<char*, 2ul>)";
const std::string kStridedAdd =
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
    "CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::"
    "BFloat16> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::"
    "CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::"
    "BFloat16> const&)::{lambda(int)#1})";
const std::string kLerp =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::TernaryOpScalarFunctor"
    "<float, 2, 2, 0>, at::native::LerpFunctor<float>, float>(at::native::(anonymous namespace)::"
    "TensorListMetadata<2>, at::native::(anonymous namespace)::TernaryOpScalarFunctor<float, 2, 2, "
    "0>, at::native::LerpFunctor<float>, float)";
const std::string kAdam =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::"
    "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float const*, double, "
    "double, double, double, double, bool, float const*, float const*>(at::native::(anonymous "
    "namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::"
    "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float const*, double, "
    "double, double, double, double, bool, float const*, float const*)";
const std::string kLayerNorm =
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, "
    "false>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, "
    "float*, c10::BFloat16*)";
const std::string kSoftmaxBackward =
    "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::BFloat16, float, "
    "c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, "
    "c10::BFloat16 const*, c10::BFloat16 const*, long)";

} // namespace

TEST(KernelNameParts, TemplateArgumentsAndElementTypes)
{
    const auto a = TemplateArgs(kMulBf16, "vectorized_elementwise_kernel");
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0], "8");
    EXPECT_EQ(a[2], "std::array<char*, 3ul>");
    EXPECT_EQ(IntegerArg("3ul"), 3u);
    EXPECT_FALSE(IntegerArg("float"));
    EXPECT_EQ(ElementBytes("c10::BFloat16 const"), 2u);
    EXPECT_EQ(ElementBytes("at::native::(anonymous namespace)::OpaqueType<8u>"), 8u);
    EXPECT_EQ(ElementTypesIn("f<long, float, bool>"), (std::vector<uint32_t>{8, 4, 1}));
    EXPECT_EQ(LambdaParams("k::{lambda()#3}::operator()() const::{lambda(float, int)#1}"),
              (std::vector<std::string_view>{"float", "int"}));
}

// TensorIterator loops: N elements, each reading its inputs and writing its output.
TEST(KernelTraffic, ElementwiseLoopsMoveTheirOperandsForEachElement)
{
    // N from the argument: 3 bf16 operands
    auto t = TrafficOf(Launch(kMulBf16, 4, 128), "0=4096");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 4096.0 * 6);
    EXPECT_TRUE(t->exact && t->followsGrid);
    EXPECT_EQ(t->access, Access::Contiguous);
    // N too large for the facts: 128 threads x 8 elements a block
    t = TrafficOf(Launch(kMulBf16, 256000, 128), "");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 256000.0 * 1024 * 6);
    // float in, bf16 out
    t = TrafficOf(Launch(kCastToBf16, 1, 128), "0=1000");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 1000.0 * (4 + 2));
    // the legacy loop over non-contiguous operands: nt x vt elements a block
    t = TrafficOf(Launch(kStridedAdd, 10, 128), "");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 10.0 * 128 * 4 * 3 * 2);
    EXPECT_EQ(t->access, Access::Strided);
}

// multi_tensor_apply: chunks of 65536 elements, r_args_depth lists read and one written;
// fused optimizers read every list and write all but the gradients.
TEST(KernelTraffic, ForeachLaunchesMoveTheirChunksOrTheElementsTheInterposerRead)
{
    auto t = TrafficOf(Launch(kLerp, 320, 512), "");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 320.0 * 65536 * 3 * 4);
    EXPECT_FALSE(t->exact) << "full chunks: a bound";
    t = TrafficOf(Launch(kLerp, 320, 512), "", "elements=1000");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 1000.0 * 3 * 4);
    EXPECT_TRUE(t->exact);
    EXPECT_FALSE(t->followsGrid);
    t = TrafficOf(Launch(kAdam, 10, 512), "", "elements=100");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 100.0 * (4 + 3) * 4);
}

// Norms and softmax: rows x row length elements of each tensor.
TEST(KernelTraffic, RowKernelsMoveTheirRows)
{
    // 4096 rows (the grid) of 512 (argument 0): x read, y written
    auto t = TrafficOf(Launch(kLayerNorm, 4096, 32), "0=512");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 4096.0 * 512 * 2 * 2);
    EXPECT_FALSE(t->followsGrid);
    // 16384 rows of 50257 classes (argument 3): output and its gradient read, one written
    t = TrafficOf(Launch(kSoftmaxBackward, 16384, 512), "3=50257");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->bytes, 16384.0 * 50257 * 3 * 2);
    EXPECT_FALSE(TrafficOf(Launch(kLayerNorm, 4096, 32), "")) << "the row length unknown";
    EXPECT_FALSE(TrafficOf(Launch("flash_fwd_kernel(Params)", 4, 128), "0=1"));
}

TEST(OpClass, KernelsAreClassedByTheirTemplate)
{
    EXPECT_EQ(ClassOf(Launch(kMulBf16, 1, 128)), OpClass::Elementwise);
    EXPECT_EQ(ClassOf(Launch(kLerp, 1, 512)), OpClass::Optimizer);
    EXPECT_EQ(ClassOf(Launch(kLayerNorm, 1, 32)), OpClass::Norm);
    EXPECT_EQ(ClassOf(Launch(kSoftmaxBackward, 1, 32)), OpClass::Norm);
    EXPECT_EQ(ClassOf(Launch("void at::native::reduce_kernel<512, 1, R>(R)", 1, 32)),
              OpClass::Reduction);
    EXPECT_EQ(ClassOf(Launch("void at::native::(anonymous namespace)::CatArrayBatchedCopy<T>(T*)",
                             1, 32)),
              OpClass::CopyKernel);
    EXPECT_EQ(ClassOf(profile::KeyForCopy("HtoD", 8)), OpClass::MemcpyHtoD);
    EXPECT_EQ(ClassOf(profile::KeyForCopy("memset", 8)), OpClass::Memset);
    EXPECT_EQ(ParseOpClass(OpClassName(OpClass::CopyKernel)), OpClass::CopyKernel);
}

// Inductor's Triton kernels move each buffer's elements once, at 4 bytes (kernel_traffic.h);
// without the interposer's work facts nothing is said.
TEST(KernelTraffic, InductorTritonKernelsMoveEachBufferOnce)
{
    const auto poi = TrafficOf(Launch("triton_poi_fused_gelu_3", 128, 128), "2=16384",
                               "elements=16384,pointers=2");
    ASSERT_TRUE(poi.has_value());
    EXPECT_DOUBLE_EQ(poi->bytes, 16384.0 * 2 * 4);
    EXPECT_FALSE(poi->exact);
    EXPECT_TRUE(poi->followsGrid);
    const auto red = TrafficOf(Launch("triton_red_fused_sum_0", 8, 256), "",
                               "elements=1048576,pointers=3");
    ASSERT_TRUE(red.has_value());
    EXPECT_DOUBLE_EQ(red->bytes, 1048576.0 * 3 * 4);
    EXPECT_FALSE(red->followsGrid);
    EXPECT_FALSE(TrafficOf(Launch("triton_poi_fused_gelu_3", 128, 128), "2=16384", "").has_value());
}
