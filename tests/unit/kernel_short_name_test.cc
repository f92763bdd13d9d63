// Kernel names in the run summary: base names as Nsight Systems shows them, a stable hash
// where two differ only in what was elided.
#include "gpu_model/kernel_short_name.h"

#include <gtest/gtest.h>

using phantora::Ellipsize;
using phantora::KernelShortNames;

TEST(KernelShortNames, BaseNamesDropReturnTypeNamespacesTemplatesAndParameters)
{
    EXPECT_EQ(KernelShortNames::BaseName(
                  "void at::native::vectorized_elementwise_kernel<4, "
                  "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, "
                  "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"),
              "vectorized_elementwise_kernel");
    // Anonymous namespaces, lambdas with their own parentheses, operator() inside.
    EXPECT_EQ(KernelShortNames::BaseName(
                  "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_"
                  "kernel<float, 4, at::native::templates::cuda::normal_and_transform<float, "
                  "float, at::CUDAGeneratorImpl*, at::native::templates::cuda::normal_kernel<at::"
                  "CUDAGeneratorImpl*>(at::TensorBase const&, double, double, at::"
                  "CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::"
                  "operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
                  "at::CUDAGeneratorImpl*)::{lambda(curandStatePhilox4_32_10*)#2}>(long, "
                  "at::PhiloxCudaState)"),
              "distribution_elementwise_grid_stride_kernel");
    // extern "C" names and plain functions stay as they are; mangled names are demangled.
    EXPECT_EQ(KernelShortNames::BaseName("gemv2T_kernel"), "gemv2T_kernel");
    EXPECT_EQ(KernelShortNames::BaseName("train_step_kernel(float*, int)"), "train_step_kernel");
    EXPECT_EQ(KernelShortNames::BaseName("_ZN2ns3fooIiEEvPfi"), "foo");
    EXPECT_EQ(KernelShortNames::BaseName("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<"
                                         "128, 128, 64, 4, false, false, cutlass::bfloat16_t>, "
                                         "true>(flash::Flash_fwd_params)"),
              "flash_fwd_kernel");
}

TEST(KernelShortNames, CollisionsGetAStableHashOfTheFullName)
{
    const std::string add = "void at::native::vectorized_elementwise_kernel<4, "
                            "at::native::CUDAFunctor_add<float> >(int)";
    const std::string mul = "void at::native::vectorized_elementwise_kernel<4, "
                            "at::native::MulFunctor<float> >(int)";
    const std::string other = "void at::native::reduce_kernel<512, 1>(int)";
    KernelShortNames names;
    names.Add(add);
    names.Add(mul);
    names.Add(other);
    EXPECT_EQ(names.Get(other), "reduce_kernel"); // unique: no hash
    const std::string a = names.Get(add);
    const std::string m = names.Get(mul);
    EXPECT_NE(a, m);
    EXPECT_EQ(a.rfind("vectorized_elementwise_kernel#", 0), 0U) << a;
    EXPECT_EQ(a.size(), std::string("vectorized_elementwise_kernel#").size() + 6) << a;
    // Stable: the same on every run (FNV-1a, not std::hash), and for another set of names.
    EXPECT_EQ(a, "vectorized_elementwise_kernel#" + KernelShortNames::Hash(add));
    EXPECT_EQ(KernelShortNames::Hash("abc"), "41574b"); // FNV-1a 64 of "abc" is 0xe71fa2190541574b
    KernelShortNames again;
    again.Add(mul);
    again.Add(add);
    EXPECT_EQ(again.Get(add), a);
}

TEST(KernelShortNames, EllipsizeKeepsLinesWithinWidth)
{
    EXPECT_EQ(Ellipsize("short", 10), "short");
    EXPECT_EQ(Ellipsize(std::string(200, 'x'), 160).size(), 160U);
    EXPECT_EQ(Ellipsize("abcdefghij", 8), "abcde...");
}
