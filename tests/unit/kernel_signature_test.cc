// Which kernel parameters are outputs, from demangled names as nvcc and PyTorch give them.
#include "kernel_signature.h"

#include <gtest/gtest.h>

using namespace phantora::interposer;

TEST(KernelSignature, ParameterTypesAreTheLastTopLevelGroupSplitAtTopLevelCommas)
{
    EXPECT_EQ(ParameterTypes("void f<int, 2>(float*, std::pair<int, int>, int)"),
              (std::vector<std::string>{"float*", "std::pair<int, int>", "int"}));
    EXPECT_EQ(ParameterTypes("void (anonymous namespace)::g<{lambda(int)#1}>(int, "
                             "at::native::(anonymous namespace)::F<{lambda(float)#1}>)"),
              (std::vector<std::string>{
                  "int", "at::native::(anonymous namespace)::F<{lambda(float)#1}>"}));
    EXPECT_TRUE(ParameterTypes("extern_c_kernel").empty());
    EXPECT_TRUE(ParameterTypes("void h()").empty());
    EXPECT_TRUE(ParameterTypes("void h(void)").empty());
}

namespace
{
constexpr ParamWrites N = ParamWrites::Nothing;
constexpr ParamWrites F = ParamWrites::First;
constexpr ParamWrites R = ParamWrites::AllButFirstAddress;
} // namespace

TEST(KernelSignature, NonConstPointersOperandArraysAndReductionsAreWritten)
{
    // cub's single-tile reduction: what nonzero() counts with; d_out is the int*.
    EXPECT_EQ(WrittenPointerParams(
                  "void cub::CUB_300000_SM_900::detail::reduce::DeviceReduceSingleTileKernel<"
                  "Policy, cub::TransformInputIterator<bool, NonZeroOp<bool>, bool const*, long>, "
                  "int*, int, cub::Sum, int, int>(cub::TransformInputIterator<bool, "
                  "NonZeroOp<bool>, bool const*, long>, int*, int, cub::Sum, int, int)"),
              (std::vector<ParamWrites>{N, F, N, N, N, N}));
    EXPECT_EQ(WrittenPointerParams("void k(const float*, float const*, float* __restrict__, "
                                   "float**, unsigned char*, long)"),
              (std::vector<ParamWrites>{N, N, F, N, F, N}));
    // PyTorch's TensorIterator kernels: a fill (its one pointer is its output) and a
    // binary op (output first, then the inputs).
    EXPECT_EQ(WrittenPointerParams("void at::native::vectorized_elementwise_kernel<4, "
                                   "at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
                                   "at::native::FillFunctor<float>, std::array<char*, 1ul>)"),
              (std::vector<ParamWrites>{N, N, F}));
    EXPECT_EQ(WrittenPointerParams("void at::native::vectorized_elementwise_kernel<4, "
                                   "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> "
                                   ">(int, at::native::CUDAFunctor_add<float>, "
                                   "std::array<char*, 3ul>)"),
              (std::vector<ParamWrites>{N, N, F}));
    EXPECT_EQ(WrittenPointerParams("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<"
                                   "float, at::native::func_wrapper_t<float, "
                                   "at::native::sum_functor<float, float, float>::operator()("
                                   "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned "
                                   "int, float, 4, 4> >(at::native::ReduceOp<float, "
                                   "at::native::func_wrapper_t<float, at::native::sum_functor<"
                                   "float, float, float>::operator()(at::TensorIterator&)::{"
                                   "lambda(float, float)#1}>, unsigned int, float, 4, 4>)"),
              (std::vector<ParamWrites>{R}));
    // A lambda's captures are in no known order: nothing.
    EXPECT_EQ(WrittenPointerParams("void at::native::elementwise_kernel<128, 4, "
                                   "at::native::gpu_kernel_impl<F>(at::TensorIteratorBase&, F "
                                   "const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<F>("
                                   "at::TensorIteratorBase&, F const&)::{lambda(int)#1})"),
              (std::vector<ParamWrites>{N, N}));
}
