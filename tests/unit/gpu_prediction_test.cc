// A GPU predicted from another's profile (gpu_prediction.h): each op's class from its
// source time against the source's roofline, and its time scaled by that class's resource;
// the cost table and the scenario reader that switch it on.
#include "cost_table_calls.h"
#include "gpu_model/gpu_prediction.h"
#include "gpu_model/kernel_cost_table.h"
#include "gpu_model/profile/profile_writer.h"
#include "scenario_loader.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <stdexcept>
#include <unistd.h>

using namespace phantora;
using namespace phantora::profile;
namespace fs = std::filesystem;

namespace
{

/// The datasheet figures the mechanism reads (scenarios/gpus/*.toml carry them cited).
GpuSpec Sheet(const std::string& model, int sms, int clockMhz, double hbmTBps, double bf16,
              double pcieGBps = 55)
{
    GpuSpec g;
    g.model = model;
    g.smCount = sms;
    g.smClockMhz = clockMhz;
    g.hbmBitsPerSecond = hbmTBps * 8e12;
    g.pcieBitsPerSecond = pcieGBps * 8e9;
    g.peakTflops["bf16"] = bf16;
    g.peakTflops["f32"] = bf16 / 15;
    return g;
}

const GpuSpec kH100 = Sheet("H100", 132, 1980, 3.35, 989.4);
const GpuSpec kH200 = Sheet("H200", 132, 1980, 4.8, 989.4);
const GpuSpec kB200 = Sheet("B200", 148, 1965, 7.7, 2250);
const GpuSpec kA100 = Sheet("A100", 108, 1410, 2.039, 312, 27.5);
constexpr double kFloorNs = 1500;

OpKey Gemm(int m, int n, int k)
{
    OpKey key;
    key.kind = OpKind::Gemm;
    key.name = "cublasGemmEx(m=" + std::to_string(m) + ",n=" + std::to_string(n) +
               ",k=" + std::to_string(k) + ",op=TN,a=bf16,b=bf16,c=bf16,batch=1)";
    return key;
}

// An elementwise bf16 multiply whose launch says its elements (kernel_traffic.h): 3 x 2 B
// an element.
const std::string kMulBf16 =
    "void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<c10::BFloat16, "
    "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, "
    "std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)";

OpKey Mul(uint32_t blocks)
{
    return KeyForLaunch(kMulBf16, {blocks, 1, 1}, {128, 1, 1}, 0);
}

} // namespace

TEST(GpuPrediction, TheSameGpuChangesNothing)
{
    const GpuPrediction p(kH100, kH100, kFloorNs);
    for (const OpKey& k : {Gemm(4096, 4096, 4096), Mul(100000), KeyForCopy("HtoD", 1 << 20)})
        EXPECT_DOUBLE_EQ(p.Scale(k, 123456).ns, 123456) << k.Describe();
}

// A GEMM of 32x32 tiles of 128 (1024 tiles) spends 2 x 4096^3 flops: 139 us at the H100's
// bf16 peak against 20 us for its bytes, so compute-bound.  On an H200 (the same tensor
// cores) it takes what it took; on a B200 its 1024 tiles take 7 waves of 148 SMs instead of
// 8 of 132, each SM at 2250/148 against 989.4/132 TFLOP/s.
TEST(GpuPrediction, ComputeBoundGemmsScaleByTensorRatePerSmAndWaves)
{
    const OpKey g = Gemm(4096, 4096, 4096);
    const double h100Ns = 180000;
    const PredictedCost onH200 = GpuPrediction(kH100, kH200, kFloorNs).Scale(g, h100Ns);
    EXPECT_EQ(onH200.cls, PredictedClass::Compute);
    EXPECT_DOUBLE_EQ(onH200.ns, h100Ns);
    const PredictedCost onB200 = GpuPrediction(kH100, kB200, kFloorNs).Scale(g, h100Ns);
    EXPECT_EQ(onB200.cls, PredictedClass::Compute);
    const double factor = (7.0 / 8.0) * (989.4 / 132) / (2250.0 / 148);
    EXPECT_NEAR(onB200.ns, kFloorNs * 1980.0 / 1965.0 + (h100Ns - kFloorNs) * factor, 1.0);
    // slower on an A100, by its lower rate per SM and its 10 waves of 108 SMs
    const PredictedCost onA100 = GpuPrediction(kH100, kA100, kFloorNs).Scale(g, h100Ns);
    EXPECT_GT(onA100.ns, 2.5 * h100Ns);
}

// Fewer tiles than SMs: each tile runs at one SM's rate on either GPU, so more SMs buy
// nothing; only the rate per SM counts.
TEST(GpuPrediction, AGemmOfFewTilesGainsOnlyTheRatePerSm)
{
    const OpKey g = Gemm(512, 1024, 65536); // 32 tiles, long k: compute-bound
    const double h100Ns = 100000;
    const PredictedCost c = GpuPrediction(kH100, kB200, 0).Scale(g, h100Ns);
    EXPECT_EQ(c.cls, PredictedClass::Compute);
    EXPECT_NEAR(c.ns, h100Ns * (989.4 / 132) / (2250.0 / 148), 1.0);
    EXPECT_GT(c.ns, h100Ns * 989.4 / 2250.0); // not the whole GPU's ratio
}

// A small GEMM is on the memory side of the roofline: its bytes take longer than its flops.
TEST(GpuPrediction, AGemmOnTheMemorySideScalesByHbm)
{
    const OpKey g = Gemm(16, 8192, 8192); // 2 MB of flops-light weights read once
    const PredictedCost c = GpuPrediction(kH100, kH200, 0).Scale(g, 60000);
    EXPECT_EQ(c.cls, PredictedClass::Memory);
    EXPECT_NEAR(c.ns, 60000 * 3.35 / 4.8, 1.0);
}

// 100000 blocks of 1024 elements: 614 MB through memory, 183 us at the H100's peak: the
// time beyond the floor scales by the HBM bandwidth; the floor by the clock.
TEST(GpuPrediction, MemoryBoundKernelsScaleByHbmAboveTheirFloor)
{
    const PredictedCost c = GpuPrediction(kH100, kH200, kFloorNs).Scale(Mul(100000), 200000);
    EXPECT_EQ(c.cls, PredictedClass::Memory);
    EXPECT_NEAR(c.ns, kFloorNs + (200000 - kFloorNs) * 3.35 / 4.8, 1.0);
}

// A kernel shorter than the floor is all fixed cost: only the clock moves it.
TEST(GpuPrediction, KernelsUnderTheFloorScaleByTheClock)
{
    const GpuPrediction p(kH100, kA100, kFloorNs);
    const PredictedCost c = p.Scale(Mul(4), 1200);
    EXPECT_EQ(c.cls, PredictedClass::Latency);
    EXPECT_NEAR(c.ns, 1200 * 1980.0 / 1410.0, 1e-6);
}

// 10 blocks (61 KB) taking 50 us: its bytes explain under a tenth of its time, so memory
// does not bound it; its SMs do (by the clock), not HBM.
TEST(GpuPrediction, AKernelMovingLittleForItsTimeIsIssueBound)
{
    const PredictedCost c = GpuPrediction(kH100, kH200, kFloorNs).Scale(Mul(10), 50000);
    EXPECT_EQ(c.cls, PredictedClass::Issue);
    EXPECT_DOUBLE_EQ(c.ns, 50000);
}

// Kernels whose bytes no launch fact says: attention and matrix products by name go with
// the tensor cores, the rest with memory.
TEST(GpuPrediction, UnknownKernelsGoByTheirName)
{
    const GpuPrediction p(kH100, kB200, 0);
    OpKey flash = KeyForLaunch("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, "
                               "128, 64, 4, false, false, cutlass::bfloat16_t> >(Flash_fwd_params)",
                               {64, 16, 1}, {128, 1, 1}, 0);
    EXPECT_EQ(p.Scale(flash, 100000).cls, PredictedClass::Compute);
    EXPECT_NEAR(p.Scale(flash, 100000).ns, 100000 * 989.4 / 2250, 1.0);
    OpKey mine = KeyForLaunch("my_kernel(float*)", {64, 1, 1}, {128, 1, 1}, 0);
    EXPECT_EQ(p.Scale(mine, 100000).cls, PredictedClass::Memory);
    EXPECT_NEAR(p.Scale(mine, 100000).ns, 100000 * 3.35 / 7.7, 1.0);
}

TEST(GpuPrediction, CopiesGoByTheirLink)
{
    const GpuPrediction p(kH100, kA100, kFloorNs);
    const PredictedCost host = p.Scale(KeyForCopy("HtoD", 1 << 24), 400000);
    EXPECT_EQ(host.cls, PredictedClass::HostLink);
    EXPECT_NEAR(host.ns, 800000, 1.0); // half the PCIe: twice the time, latency included
    const PredictedCost device = p.Scale(KeyForCopy("DtoD", 1 << 24), 20000);
    EXPECT_EQ(device.cls, PredictedClass::Memory);
    EXPECT_NEAR(device.ns, 20000 * 3.35 / 2.039, 1.0);
}

TEST(GpuPrediction, ADatasheetWithoutAFigureItNeedsIsRefusedNamingIt)
{
    GpuSpec noHbm = kB200;
    noHbm.hbmBitsPerSecond = 0;
    try
    {
        GpuPrediction(kH100, noHbm, 0);
        FAIL() << "accepted a datasheet without its HBM bandwidth";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find("hbm_bandwidth"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("B200"), std::string::npos) << e.what();
    }
}

namespace
{

class PredictedCostTableTest : public ::testing::Test
{
protected:
    void SetUp() override
    {
        dir = fs::temp_directory_path() / ("phantora-predict-test-" + std::to_string(getpid()));
        fs::create_directories(dir);
        profile = dir / "H100.sqlite";
        fs::remove(profile);
        ProfileWriter w(profile);
        w.SetMetadata("gpu_model", "H100");
        w.AddSamples(Mul(100000), {200000, 200000, 200000}, "t", "record");
        for (uint32_t i = 1; i <= 9; ++i) // short kernels: the profile's floor is 1500 ns
            w.AddSamples(
                KeyForLaunch("tiny" + std::to_string(i) + "(float*)", {1, 1, 1}, {32, 1, 1}, 0),
                {1500}, "t", "record");
        OpKey g = Gemm(4096, 4096, 4096);
        w.AddSamples(g, {180000}, "t", "replay");
        w.Commit();
        kernels.defaultNs = 7000;
        kernels.profile = profile;
        kernels.profileOf = kH100;
    }
    void TearDown() override { fs::remove_all(dir); }
    fs::path dir, profile;
    KernelSpec kernels;
};

const char* kTopology =
    "[topology]\nkind = \"switch\"\ngpus = 1\nlink_bandwidth = \"1GB/s\"\nlink_latency = \"1us\"\n";

wire::KernelLaunch Launch(const OpKey& k)
{
    wire::KernelLaunch l;
    l.name = k.name;
    l.grid = k.grid;
    l.block = k.block;
    return l;
}

} // namespace

// The measured H100 times, scaled to the H200: the GEMM as it was, the memory-bound
// kernel by the HBM ratio above the profile's floor; counted by class for the report.
TEST_F(PredictedCostTableTest, MeasuredOpsAreScaledToTheScenariosGpu)
{
    KernelCostTable t(kH200, kernels);
    ASSERT_NE(t.Prediction(), nullptr);
    EXPECT_DOUBLE_EQ(t.Prediction()->LatencyFloor(), 1500);
    const OpCost k = test::PriceLaunch(t, Launch(Mul(100000)));
    EXPECT_EQ(k.source, CostSource::Measured);
    EXPECT_NEAR(k.ns, 1500 + 198500 * 3.35 / 4.8, 1.0);
    EXPECT_EQ(test::PriceLaunch(t, Launch(Gemm(4096, 4096, 4096))).ns, 180000);
    const auto& by = t.ByPredictedClass();
    EXPECT_EQ(by[size_t(PredictedClass::Memory)].ops, 1U);
    EXPECT_EQ(by[size_t(PredictedClass::Compute)].ops, 1U);
    EXPECT_DOUBLE_EQ(by[size_t(PredictedClass::Memory)].sourceNs, 200000);
}

// Without profile_of the profile must be the scenario's GPU's; with it, the datasheet's.
TEST_F(PredictedCostTableTest, TheProfileMustBeTheDatasheetsGpu)
{
    kernels.profileOf = kH200;
    kernels.profileOfFile = "gpus/H200.toml";
    try
    {
        KernelCostTable t(kB200, kernels, "b200.toml");
        FAIL() << "accepted an H100 profile as an H200's";
    }
    catch (const ProfileError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("profile_of"), std::string::npos) << what;
        EXPECT_NE(what.find("gpus/H200.toml"), std::string::npos) << what;
    }
    kernels.profileOf.reset();
    EXPECT_THROW(KernelCostTable(kB200, kernels), ProfileError);
}

// The scenario reader: profile_of names a datasheet beside the scenario (gpus/NAME.toml)
// or by path; every shipped datasheet reads.
TEST_F(PredictedCostTableTest, TheScenarioNamesTheMeasuredGpusDatasheet)
{
    fs::create_directories(dir / "gpus");
    fs::copy_file(fs::path(PHANTORA_SOURCE_DIR) / "scenarios" / "gpus" / "H100.toml",
                  dir / "gpus" / "H100.toml", fs::copy_options::overwrite_existing);
    std::ofstream(dir / "b200.toml")
        << "extends = \""
        << (fs::path(PHANTORA_SOURCE_DIR) / "scenarios" / "gpus" / "B200.toml").string() << "\"\n"
        << kTopology
        << "[kernels]\ndefault = \"10us\"\nprofile = \"H100.sqlite\"\n"
           "profile_of = \"H100\"\n";
    const Scenario s = LoadScenario(dir / "b200.toml");
    ASSERT_TRUE(s.kernels.profileOf.has_value());
    EXPECT_EQ(s.kernels.profileOf->model, "H100");
    EXPECT_EQ(s.kernels.profileOf->smClockMhz, 1980);
    EXPECT_EQ(s.gpu.model, "B200");
    EXPECT_EQ(s.gpu.smCount, 148);
    EXPECT_EQ(s.gpu.nvlinkGeneration, 5);
    EXPECT_DOUBLE_EQ(s.gpu.peakTflops.at("tf32"), 1100);
    KernelCostTable t(s.gpu, s.kernels, s.file);
    EXPECT_NE(t.Prediction(), nullptr);

    std::ofstream(dir / "bad.toml")
        << "[gpu]\nmodel = \"X\"\nmemory = \"1GiB\"\nhbm_bandwidth = \"1TB/s\"\n"
           "pcie_bandwidth = \"1GB/s\"\n"
        << kTopology
        << "[kernels]\ndefault = \"10us\"\n"
           "profile = \"H100.sqlite\"\nprofile_of = \"Z100\"\n";
    try
    {
        LoadScenario(dir / "bad.toml");
        FAIL() << "accepted a profile_of with no datasheet";
    }
    catch (const ScenarioError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("profile_of"), std::string::npos) << what;
        EXPECT_NE(what.find("Z100.toml"), std::string::npos) << what;
        EXPECT_NE(what.find("bad.toml"), std::string::npos) << what;
    }

    for (const auto& e :
         fs::directory_iterator(fs::path(PHANTORA_SOURCE_DIR) / "scenarios" / "gpus"))
    {
        if (e.path().extension() != ".toml")
            continue;
        std::ofstream(dir / "each.toml") << "extends = \"" << e.path().string() << "\"\n"
                                         << kTopology << "[kernels]\n"
                                         << "default = \"10us\"\nprofile = \"H100.sqlite\"\n"
                                         << "profile_of = \"" << e.path().string() << "\"\n";
        SCOPED_TRACE(e.path().string());
        const Scenario each = LoadScenario(dir / "each.toml");
        ASSERT_TRUE(each.kernels.profileOf.has_value());
        EXPECT_EQ(each.kernels.profileOf->model, each.gpu.model);
        EXPECT_GT(each.gpu.smClockMhz, 0);
        EXPECT_GT(each.gpu.nvlinkBitsPerSecond, 0);
        EXPECT_GT(each.gpu.peakTflops.at("bf16"), 0);
    }
}
