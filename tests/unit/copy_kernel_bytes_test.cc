// Estimates for kernels the profile never measured: a data-movement kernel from the bytes
// its launch says it moves, at the bandwidth the profile measured for such bytes.
#include "cost_table_calls.h"
#include "gpu_model/copy_kernel_bytes.h"
#include "gpu_model/kernel_cost_table.h"
#include "gpu_model/profile/profile_writer.h"
#include "scenario_loader.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace phantora;

namespace
{

constexpr const char* kSplit =
    "at::native::detail::split_with_sizes_copy_out_contiguous_no_cast_kernel(char**, char**, "
    "long*, long*, long*, long, long)";
constexpr const char* kChunkCat =
    "void at::native::detail::chunk_cat_cuda_kernel<float, c10::BFloat16>(c10::BFloat16**, "
    "float*, long*, long*, long*, long*, long*, long*, long, long, long)";
constexpr const char* kCopyForeach =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::CopyFunctor<c10::"
    "BFloat16, float, 2, 1, 1>, at::native::Copy<c10::BFloat16, float> >(at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::CopyFunctor<c10::"
    "BFloat16, float, 2, 1, 1>, at::native::Copy<c10::BFloat16, float>)";
constexpr const char* kScaleForeach =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor"
    "<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::"
    "TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, "
    "0>, std::multiplies<float>, float)";

} // namespace

TEST(CopyKernelBytes, TheBaseNameIsTheTemplatesName)
{
    EXPECT_EQ(KernelBaseName(kSplit), "split_with_sizes_copy_out_contiguous_no_cast_kernel");
    EXPECT_EQ(KernelBaseName(kChunkCat), "chunk_cat_cuda_kernel");
    EXPECT_EQ(KernelBaseName(kCopyForeach), "multi_tensor_apply_kernel");
    EXPECT_EQ(KernelBaseName(kCopyForeach), KernelBaseName(kScaleForeach));
    EXPECT_EQ(KernelBaseName("first_kernel(float*)"), "first_kernel");
}

TEST(CopyKernelBytes, SplitAndChunkCatMoveWhatTheirArgumentsSay)
{
    // 4 rows of 1 MiB: read and written once each.
    EXPECT_EQ(CopyKernelBytes(kSplit, {512, 1, 1}, "5=1048576,6=4"), 8u << 20);
    // 2 chunks x 3 slices of 4096 float bytes written, read from bf16: half as many.
    EXPECT_EQ(CopyKernelBytes(kChunkCat, {9, 2, 3}, "8=8192,9=4096,10=2"), 6u * 4096 * 3 / 2);
    EXPECT_FALSE(CopyKernelBytes(kSplit, {512, 1, 1}, "5=1048576"));
    EXPECT_FALSE(CopyKernelBytes(kCopyForeach, {56, 1, 1}, "0=1"));
}

TEST(CopyKernelBytes, UnmeasuredKernelsAreTimedByTheBytesTheyMove)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("phantora-bytes-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const fs::path db = dir / "p.sqlite";
    {
        profile::ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        profile::OpKey copy;
        copy.kind = profile::OpKind::Memcpy;
        copy.name = "DtoD";
        copy.bytes = 100'000'000;
        w.AddSamples(copy, {50'000}, "r", "record"); // 200 MB in 50 us: 4 TB/s
        profile::OpKey foreach;
        foreach
            .name = kScaleForeach;
        foreach
            .grid = {100, 1, 1};
        foreach
            .block = {512, 1, 1};
        w.AddSamples(foreach, {30'000}, "r", "record");
        w.Commit();
    }
    std::ofstream(dir / "s.toml") << "[gpu]\nmodel = \"H200\"\nmemory = \"80GiB\"\n"
                                     "hbm_bandwidth = \"4.8TB/s\"\npcie_bandwidth = \"55GB/s\"\n"
                                     "[topology]\nkind = \"switch\"\ngpus = 1\n"
                                     "link_bandwidth = \"400Gbps\"\nlink_latency = \"1us\"\n"
                                     "[kernels]\ndefault = \"1s\"\nprofile = \"p.sqlite\"\n";
    const Scenario scenario = LoadScenario(dir / "s.toml");
    KernelCostTable t(scenario.gpu, scenario.kernels);

    wire::KernelLaunch split;
    split.name = kSplit;
    split.grid = {512, 1, 1};
    split.block = {128, 1, 1};
    split.args = "5=4000000,6=4"; // 16 MB read and 16 written
    const OpCost s = test::PriceLaunch(t, split);
    EXPECT_EQ(s.source, CostSource::Bytes);
    // One measured copy: the line through it at the HBM's rate (4.8 TB/s), 32 MB 168 MB
    // short of its 200 MB.
    EXPECT_EQ(s.ns, std::llround(50'000 - (200e6 - 32e6) / 4.8e12 * 1e9));

    wire::KernelLaunch copy;
    copy.name = kCopyForeach;
    copy.grid = {50, 1, 1};
    copy.block = {512, 1, 1};
    const OpCost c = test::PriceLaunch(t, copy);
    EXPECT_EQ(c.source, CostSource::Bytes);
    // Its 50 chunks of 65536 elements (6 bytes each: float read, bf16 written), each at an
    // SM's share of the bandwidth: as long as 132 of them (one per SM) take.
    const double bytes = 132.0 * 65536 * 6;
    EXPECT_EQ(c.ns, std::llround(50'000 - (200e6 - bytes) / 4.8e12 * 1e9));
    // with the elements its launch read: those at the same rate
    copy.work = "elements=1000";
    EXPECT_LT(test::PriceLaunch(t, copy).ns, c.ns);

    // the measured foreach at another grid: its chunks too, not the threads' scaling (a
    // chunk may hold 65536 elements or 100)
    wire::KernelLaunch scale;
    scale.name = kScaleForeach;
    scale.grid = {300, 1, 1};
    scale.block = {512, 1, 1};
    EXPECT_EQ(test::PriceLaunch(t, scale).source, CostSource::Bytes);

    wire::KernelLaunch other;
    other.name = "never_seen(int)";
    other.grid = {1, 1, 1};
    other.block = {32, 1, 1};
    EXPECT_EQ(test::PriceLaunch(t, other).source, CostSource::Default);
    fs::remove_all(dir);
}
