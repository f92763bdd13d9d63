// What the interposer reads from a foreach launch's TensorListMetadata: the elements its
// blocks process (kernel_work.h), checked against the structs as the compiler lays them out
// from ATen's definitions (MultiTensorApply.cuh, 4 KiB kernel arguments).
#include "cuda_abi/kernel_work.h"

#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <string_view>

using namespace phantora::kernel_args;

namespace
{

struct TensorListMetadata1
{
    const void* addresses[1][110];
    int64_t numel_for_tensor[110];
    unsigned char block_to_tensor[320];
    int block_to_chunk[320];
    int start_tensor_this_launch;
};

struct ScalarListMetadataFloat3
{
    const void* addresses[3][48];
    int64_t numel_for_tensor[48];
    float scalar_vals[48];
    unsigned char block_to_tensor[320];
    int block_to_chunk[320];
};

struct FusedOptimizerMetadata4
{
    const void* addresses[4][36];
    int64_t numel_for_tensor[36];
    const void* state_steps_addresses[36];
    unsigned char block_to_tensor[320];
    int block_to_chunk[320];
    int start_tensor_this_launch;
};

// As nvcc mangles the device names of PyTorch's foreach and fused-Adam kernels.
const std::string kScale =
    "_ZN2at6native57_GLOBAL__N__2ae4b20b_25_ForeachBinaryOpScalar_cu_8b9e2b6d25multi_tensor_"
    "apply_kernelINS1_18TensorListMetadataILi1EEENS1_21BinaryOpScalarFunctorIfLi1ELi1ELi0EEEJSt"
    "10multipliesIfEfEEEvT_T0_DpT1_";
const std::string kDivide =
    "_ZN2at6native57_GLOBAL__N__b4ba6c5c_29_ForeachPointwiseOp_cu_0e8f8f5e25multi_tensor_apply_"
    "kernelINS1_28TensorListScalarListMetadataIfLi3EEENS1_28PointwiseOpScalarListFunctorIfLi3ELi3"
    "ELi0EEEJSt7dividesIfEEEEvT_T0_DpT1_";
const std::string kAdam = "_ZN2at6native57_GLOBAL__N__d26f7b48_18_FusedAdamKernel_cu_25multi_"
                          "tensor_apply_kernelINS1_32FusedOptimizerTensorListMetadataILi4EEENS1_"
                          "20FusedAdamMathFunctorIfLi4ELNS0_9ADAM_MODEE1ELb0EEEJPKfddddd"
                          "bS9_S9_EEEvT_T0_DpT1_";

std::string_view Bytes(const void* p, std::size_t n)
{
    return {static_cast<const char*>(p), n};
}

} // namespace

// Three tensors of 100, 70000 and 65536 elements: 4 chunks of at most 65536, the second
// tensor's last one 4464 elements.
TEST(KernelWork, ForeachElementsAreTheBlocksChunks)
{
    auto m = std::make_unique<TensorListMetadata1>();
    std::memset(m.get(), 0, sizeof *m);
    const int64_t numel[] = {100, 70000, 65536};
    const unsigned char tensor[] = {0, 1, 1, 2};
    const int chunk[] = {0, 0, 1, 0};
    std::memcpy(m->numel_for_tensor, numel, sizeof numel);
    std::memcpy(m->block_to_tensor, tensor, sizeof tensor);
    std::memcpy(m->block_to_chunk, chunk, sizeof chunk);
    const auto bytes = Bytes(m.get(), sizeof *m);
    EXPECT_EQ(MultiTensorElements(kScale, bytes, 4), 100u + 65536 + 4464 + 65536);
    // the first two blocks only
    EXPECT_EQ(MultiTensorElements(kScale, bytes, 2), 100u + 65536);
    // a block past its tensor's end: not this layout
    m->block_to_chunk[4] = 5;
    EXPECT_FALSE(MultiTensorElements(kScale, bytes, 5));
    // a parameter of another size: no layout fits
    EXPECT_FALSE(MultiTensorElements(kScale, bytes.substr(0, bytes.size() - 8), 4));
    // another kernel
    EXPECT_FALSE(MultiTensorElements("_Z4stepPfi", bytes, 4));
}

TEST(KernelWork, ScalarListAndFusedOptimizerLayouts)
{
    auto s = std::make_unique<ScalarListMetadataFloat3>();
    std::memset(s.get(), 0, sizeof *s);
    s->numel_for_tensor[0] = 131072;
    s->block_to_tensor[1] = 0;
    s->block_to_chunk[1] = 1;
    EXPECT_EQ(MultiTensorElements(kDivide, Bytes(s.get(), sizeof *s), 2), 131072u);

    auto f = std::make_unique<FusedOptimizerMetadata4>();
    std::memset(f.get(), 0, sizeof *f);
    f->numel_for_tensor[0] = 4096;
    f->numel_for_tensor[1] = 1000;
    f->block_to_tensor[1] = 1;
    EXPECT_EQ(MultiTensorElements(kAdam, Bytes(f.get(), sizeof *f), 2), 5096u);
}

TEST(KernelWork, WorkFactsNameTheElements)
{
    auto m = std::make_unique<TensorListMetadata1>();
    std::memset(m.get(), 0, sizeof *m);
    m->numel_for_tensor[0] = 5000;
    void* args[] = {m.get(), nullptr};
    const ParamLayout layout = {{0, static_cast<uint32_t>(sizeof *m)}, {3368, 1}};
    EXPECT_EQ(WorkFacts(kScale, layout, args, 1), "elements=5000");
    EXPECT_EQ(WorkFacts("_Z4stepPfi", layout, args, 1), "");
    EXPECT_EQ(WorkFacts(kScale, layout, nullptr, 1), "");
}

// Inductor's Triton kernels: buffers first, then their sizes, then Triton's two scratch
// pointers (triton_poi_fused_gelu_3's cubin: 0@0:8 1@8:8 2@16:4 3@24:8 4@32:8).
TEST(KernelWork, InductorKernelsSayTheirBuffersAndTheProductOfTheirSizes)
{
    const ParamLayout pointwise{{0, 8}, {8, 8}, {16, 4}, {24, 8}, {32, 8}};
    uint64_t in = 0x7f0000000000, out = 0x7f0000100000, scratch = 0;
    int32_t xnumel = 16384;
    void* args[] = {&in, &out, &xnumel, &scratch, &scratch};
    EXPECT_EQ(WorkFacts("triton_poi_fused_gelu_3", pointwise, args, 128),
              "elements=16384,pointers=2");

    // a reduction: xnumel rows of r0_numel
    const ParamLayout reduction{{0, 8}, {8, 8}, {16, 8}, {24, 4}, {28, 4}, {32, 8}, {40, 8}};
    int32_t rows = 256, length = 64;
    void* rargs[] = {&in, &in, &out, &rows, &length, &scratch, &scratch};
    EXPECT_EQ(WorkFacts("triton_per_fused_gelu_gelu_backward_sum_2", reduction, rargs, 8),
              "elements=16384,pointers=3");

    // a size that is not positive says nothing; nor does a kernel Inductor did not name
    int32_t none = 0;
    void* empty[] = {&in, &out, &none, &scratch, &scratch};
    EXPECT_EQ(WorkFacts("triton_poi_fused_gelu_3", pointwise, empty, 1), "");
    EXPECT_EQ(WorkFacts("my_triton_kernel", pointwise, args, 128), "");
}
