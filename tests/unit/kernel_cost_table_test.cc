// Where a simulated op's duration comes from: the scenario's table, the profile, an
// estimate from the profile at other shapes, the roofline, the default; and what the
// report and the missing-ops file say about it.
#include "cost_table_calls.h"
#include "engine/copies.h"
#include "gpu_model/kernel_cost_table.h"
#include "gpu_model/profile/gemm_signature.h"
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/program_name.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace phantora;
using namespace phantora::profile;
namespace fs = std::filesystem;

namespace
{

const std::string kStep = "step(float*, unsigned long)";
const std::string kGemm = "cublasGemmEx(m=4096,n=4096,k=4096,op=TN,a=bf16,b=bf16,c=bf16,batch=1)";

wire::KernelLaunch Launch(const std::string& name, uint32_t grid, uint32_t block)
{
    wire::KernelLaunch k;
    k.name = name;
    k.grid = {grid, 1, 1};
    k.block = {block, 1, 1};
    return k;
}

class KernelCostTableTest : public ::testing::Test
{
protected:
    void SetUp() override
    {
        dir = fs::temp_directory_path() / ("phantora-cost-test-" + std::to_string(getpid()));
        fs::create_directories(dir);
        scenario.file = dir / "s.toml";
        scenario.gpu.model = "H200";
        scenario.gpu.hbmBitsPerSecond = 4.8e12 * 8;
        scenario.kernels.defaultNs = 7000;
        scenario.kernels.profile = dir / "H200.sqlite";
        fs::remove(scenario.kernels.profile);
        ProfileWriter w(scenario.kernels.profile);
        w.SetMetadata("gpu_model", "H200");
        OpKey step;
        step.name = kStep;
        step.grid = {1024, 1, 1};
        step.block = {256, 1, 1};
        w.AddSamples(step, {50000, 52000, 51000}, "t", "record");
        OpKey gemm;
        gemm.kind = OpKind::Gemm;
        gemm.name = kGemm;
        w.AddSamples(gemm, {180000, 181000, 182000}, "t", "replay");
        OpKey copy;
        copy.kind = OpKind::Memcpy;
        copy.name = "HtoD";
        copy.bytes = 1000;
        w.AddSamples(copy, {2000}, "t", "record");
        copy.bytes = 1000000;
        w.AddSamples(copy, {22000}, "t", "record");
        w.Commit();
    }
    fs::path dir;
    Scenario scenario;
};

} // namespace

// A kernel takes its median; a library call (a GEMM here) its 10th percentile: the span of
// its kernels with the recorder's host ahead (OpStats::OnStreamNs).
TEST_F(KernelCostTableTest, MeasuredKernelsTakeTheirMedianLibraryCallsTheirLowerDecile)
{
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost k = test::PriceLaunch(t, Launch(kStep, 1024, 256));
    EXPECT_EQ(k.source, CostSource::Measured);
    EXPECT_EQ(k.ns, 51000);
    const OpCost g = test::PriceLaunch(t, Launch(kGemm, 0, 0));
    EXPECT_EQ(g.source, CostSource::Measured);
    EXPECT_EQ(g.ns, 180200); // 180000, 181000, 182000: a fifth of the way to the second
    EXPECT_DOUBLE_EQ(t.MeasuredShare(), 1.0);
    EXPECT_TRUE(t.Misses().empty());
}

TEST_F(KernelCostTableTest, TheScenarioTableOverridesTheProfile)
{
    scenario.kernels.durationsNs["step"] = 3000;
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost k = test::PriceLaunch(t, Launch(kStep, 1024, 256));
    EXPECT_EQ(k.source, CostSource::Table);
    EXPECT_EQ(k.ns, 3000);
}

TEST_F(KernelCostTableTest, OtherLaunchShapesScaleByThreads)
{
    // One SM: every launch here is many waves, so time goes with the threads.
    scenario.gpu.smCount = 1;
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost twice = test::PriceLaunch(t, Launch(kStep, 2048, 256));
    EXPECT_EQ(twice.source, CostSource::ShapeScaled);
    EXPECT_EQ(twice.ns, 2 * 51000);
    const OpCost quarter = test::PriceLaunch(t, Launch(kStep, 1024, 64));
    EXPECT_EQ(quarter.ns, 51000 / 4);
    const OpCost unknown = test::PriceLaunch(t, Launch("other(int)", 1, 32));
    EXPECT_EQ(unknown.source, CostSource::Default);
    EXPECT_EQ(unknown.ns, scenario.kernels.defaultNs);
    EXPECT_LT(t.MeasuredShare(), 1.0);
    // the same op again: the same estimate, counted twice
    EXPECT_EQ(test::PriceLaunch(t, Launch(kStep, 2048, 256)).ns, twice.ns);
    EXPECT_EQ(test::PriceLaunch(t, Launch("other(int)", 1, 32)).source, CostSource::Default);
    EXPECT_EQ(t.DefaultedCount(), 2u);
    const auto misses = t.Misses();
    ASSERT_EQ(misses.size(), 3u);
    EXPECT_EQ(misses.front().key.grid[0], 2048u); // the largest estimated time first
    EXPECT_EQ(misses.front().count, 2u);
    EXPECT_EQ(misses.front().ns, 2 * twice.ns);
}

// Below one wave (SMs x 2048 threads) a launch's threads run side by side: a one-thread
// sample of a reduction stands for a half-GPU launch at about its own time, not 131,072
// times it (what TorchTitan's tensor-parallel run was charged: 1.3 s a launch).
TEST_F(KernelCostTableTest, LaunchesSmallerThanTheGpuTakeAboutTheSampleTime)
{
    scenario.gpu.smCount = 132; // one wave: 270,336 threads
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost quarter = test::PriceLaunch(t, Launch(kStep, 1024, 64)); // 65,536 threads
    EXPECT_EQ(quarter.source, CostSource::ShapeScaled);
    EXPECT_EQ(quarter.ns, 51000) << "the sample (262,144 threads) and it are one wave each";
    const OpCost twice =
        test::PriceLaunch(t, Launch(kStep, 2048, 256)); // 524,288 threads: 1.94 waves
    EXPECT_EQ(twice.ns, std::llround(51000.0 * 524288 / 270336));
}

TEST_F(KernelCostTableTest, GemmsOfTheSameFamilyScaleByFlopsButNeverBeatTheRoofline)
{
    scenario.gpu.peakTflops["bf16"] = 1000.0;
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const std::string half =
        "cublasGemmEx(m=4096,n=2048,k=4096,op=TN,a=bf16,b=bf16,c=bf16,batch=1)";
    const OpCost h = test::PriceLaunch(t, Launch(half, 0, 0));
    EXPECT_EQ(h.source, CostSource::ShapeScaled);
    EXPECT_EQ(h.ns, 180200 / 2); // from the sample's 10th percentile, as it is charged
    // 1000x the work: 1000x the measured time (slower than the 1000 TFLOP/s roofline)
    const std::string big =
        "cublasGemmEx(m=4096,n=4096,k=4096,op=TN,a=bf16,b=bf16,c=bf16,batch=1000)";
    EXPECT_EQ(test::PriceLaunch(t, Launch(big, 0, 0)).ns, 180200LL * 1000);
    // with an impossible measurement (faster than the peak) the roofline wins
    scenario.gpu.peakTflops["bf16"] = 1.0;
    KernelCostTable slow(scenario.gpu, scenario.kernels);
    const auto g = GemmSignature::Parse(half);
    EXPECT_EQ(test::PriceLaunch(slow, Launch(half, 0, 0)).ns,
              std::llround(g->Flops() / 1e12 * 1e9));
}

// A GEMM whose leading dimension is no multiple of 8 elements runs on other (slower)
// kernels: it scales from a measured GEMM of its alignment, however far in shape, and an
// aligned one never from an unaligned sample, however near.
TEST_F(KernelCostTableTest, GemmsScaleFromSamplesOfTheirLeadingDimensionsAlignment)
{
    const std::string head =
        "cublasGemmEx(m=50257,n=8192,k=1024,op=TN,a=bf16,b=bf16,c=bf16,batch=1)";
    {
        ProfileWriter w(scenario.kernels.profile);
        OpKey slow;
        slow.kind = OpKind::Gemm;
        slow.name = head; // ldc = m = 50257: alignment 1
        w.AddSamples(slow, {8'800'000}, "t", "record");
        w.Commit();
    }
    KernelCostTable t(scenario.gpu, scenario.kernels);
    // another vocabulary of alignment 1, 2x the flops: the unaligned head's time, twice
    const std::string other =
        "cublasGemmEx(m=50257,n=16384,k=1024,op=TN,a=bf16,b=bf16,c=bf16,batch=1)";
    EXPECT_EQ(test::PriceLaunch(t, Launch(other, 0, 0)).ns, 2 * 8'800'000);
    // the padded vocabulary (50304, a multiple of 8): from the aligned 4096^3 GEMM by flops
    const std::string padded =
        "cublasGemmEx(m=50304,n=8192,k=1024,op=TN,a=bf16,b=bf16,c=bf16,batch=1)";
    const double flops = 2.0 * 50304 * 8192 * 1024, sampleFlops = 2.0 * 4096 * 4096 * 4096;
    EXPECT_EQ(test::PriceLaunch(t, Launch(padded, 0, 0)).ns,
              std::llround(180200 * flops / sampleFlops));
}

// A GEMM sample too small to fill the GPU (one 128x128 tile on 132 SMs) runs at a
// fraction of the GPU's rate; scaled by flops it charged pipeline-parallel TorchTitan's
// fp32 GEMMs that rate (2.2 ms for a 16x2048x2048 batch-16 GEMM the H100's fp32 peak does
// in 32 us).  Its time is one pass of its tile through the k loop: the target takes that
// per wave of its tiles and per sample-k of its k.
TEST_F(KernelCostTableTest, AGemmSampleThatDoesNotFillTheGpuScalesByWavesNotFlops)
{
    const std::string tiny = "cublasSgemm(m=128,n=128,k=128,op=NN,a=f32,b=f32,c=f32,batch=1)";
    {
        ProfileWriter w(scenario.kernels.profile);
        OpKey sample;
        sample.kind = OpKind::Gemm;
        sample.name = tiny;
        w.AddSamples(sample, {4320}, "t", "record");
        w.Commit();
    }
    scenario.gpu.smCount = 132;
    scenario.gpu.peakTflops["f32"] = 66.9;
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const std::string wide =
        "cublasSgemmStridedBatched(m=16,n=2048,k=2048,op=NN,a=f32,b=f32,c=f32,batch=16)";
    const OpCost c = test::PriceLaunch(t, Launch(wide, 0, 0));
    EXPECT_EQ(c.source, CostSource::ShapeScaled);
    // 1 x 16 tiles x 16 batches = 256 tiles: 1.94 waves; k 16x the sample's
    EXPECT_EQ(c.ns, std::llround(4320.0 * (256.0 / 132.0) * 16.0));
    const auto g = GemmSignature::Parse(wide);
    const auto s = GemmSignature::Parse(tiny);
    EXPECT_LT(c.ns, 4320.0 * g->Flops() / s->Flops() / 10) << "not the sample's rate";
    // Still never faster than the roofline: a square 2048 GEMM has as many tiles and k
    // passes as the one above (134 us by waves) but 128x its flops (257 us at the peak).
    const std::string square = "cublasSgemm(m=2048,n=2048,k=2048,op=NN,a=f32,b=f32,c=f32,batch=1)";
    EXPECT_EQ(test::PriceLaunch(t, Launch(square, 0, 0)).ns,
              std::llround(2.0 * 2048 * 2048 * 2048 / 66.9e12 * 1e9));
}

TEST_F(KernelCostTableTest, WithoutAProfileGemmsUseTheRooflineThenTheDefault)
{
    scenario.kernels.profile.clear();
    {
        KernelCostTable t(scenario.gpu, scenario.kernels);
        EXPECT_EQ(test::PriceLaunch(t, Launch(kGemm, 0, 0)).source, CostSource::Default);
    }
    scenario.gpu.peakTflops["bf16"] = 800.0;
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost c = test::PriceLaunch(t, Launch(kGemm, 0, 0));
    EXPECT_EQ(c.source, CostSource::Roofline);
    EXPECT_EQ(c.ns, std::llround(2.0 * 4096 * 4096 * 4096 / 800e12 * 1e9));
    // a thin GEMM is memory-bound: bytes at HBM speed
    const std::string thin = "cublasGemmEx(m=65536,n=1,k=65536,op=TN,a=bf16,b=bf16,c=bf16,batch=1)";
    const auto g = GemmSignature::Parse(thin);
    EXPECT_EQ(test::PriceLaunch(t, Launch(thin, 0, 0)).ns,
              std::llround(g->Bytes() * 8 / scenario.gpu.hbmBitsPerSecond * 1e9));
}

// A copy the profile lacks: the line through the measured copies of its direction (a
// latency plus the bytes at a bandwidth), here 2 us for 1000 B and 22 us for 1 MB.
TEST_F(KernelCostTableTest, CopiesFollowTheLineThroughTheMeasuredSizes)
{
    KernelCostTable t(scenario.gpu, scenario.kernels);
    EXPECT_EQ(t.Copy(CopyKey(wire::CopyKind::HostToDevice, 1000), 999).source,
              CostSource::Measured);
    const double perByte = 20000.0 / 999000.0, latency = 2000 - 1000 * perByte;
    const OpCost mid = t.Copy(CopyKey(wire::CopyKind::HostToDevice, 500500), 999);
    EXPECT_EQ(mid.source, CostSource::ShapeScaled);
    EXPECT_EQ(mid.ns, 12000);
    // past the largest: the same line, not the largest's own rate
    EXPECT_EQ(t.Copy(CopyKey(wire::CopyKind::HostToDevice, 2000000), 40000).ns,
              std::llround(latency + 2e6 * perByte));
    // no DtoH copy measured: the scenario's bandwidth model
    const OpCost model = t.Copy(CopyKey(wire::CopyKind::DeviceToHost, 4096), 1234);
    EXPECT_EQ(model.source, CostSource::Roofline);
    EXPECT_EQ(model.ns, 1234);
}

// A 23 MB copy estimated from 1 MB ones that took mostly latency: scaled by its bytes it
// was charged their latency for every byte; the line's slope is noise there, so the bytes
// past them go at the link's rate.
TEST_F(KernelCostTableTest, ALargeCopyPastLatencyBoundOnesGoesAtTheLinksRate)
{
    {
        ProfileWriter w(scenario.kernels.profile);
        OpKey copy;
        copy.kind = OpKind::Memcpy;
        copy.name = "DtoH";
        for (uint64_t bytes : {64, 512, 4096})
        {
            copy.bytes = bytes;
            w.AddSamples(copy, {1500, 1500}, "t", "record");
        }
        w.Commit();
    }
    scenario.gpu.pcieBitsPerSecond = 50e9 * 8;
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpCost c = t.Copy(CopyKey(wire::CopyKind::DeviceToHost, 23068672), 0);
    EXPECT_EQ(c.source, CostSource::ShapeScaled);
    EXPECT_NEAR(static_cast<double>(c.ns), 1500 + (23068672 - 4096) / 50.0, 100.0);
}

// Host copies the profile lacks, from the copies of their own population: the replay
// tool's, from pinned memory (55 GB/s here), or the programs' own, pageable (9 GB/s).
TEST_F(KernelCostTableTest, PinnedAndPageableCopiesAreEstimatedApart)
{
    {
        ProfileWriter w(scenario.kernels.profile);
        w.AddRun("train", "train_gpt.py", "python train_gpt.py");
        w.AddRun("replay", std::string(kReplayProgram), "gpu_profiler_gpu replay copies.json");
        OpKey copy;
        copy.kind = OpKind::Memcpy;
        copy.name = "DtoH";
        for (uint64_t mb : {1, 4, 16})
        {
            copy.bytes = mb << 20;
            const double b = static_cast<double>(copy.bytes);
            w.AddSamples(copy, {std::llround(2000 + b / 9.0)}, "train", "record");
            w.AddSamples(copy, {std::llround(2000 + b / 55.0)}, "replay", "replay");
        }
        w.Commit();
    }
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const uint64_t bytes = 23068672;
    const OpCost pageable = t.Copy(CopyKey(wire::CopyKind::DeviceToHost, bytes), 0, false);
    const OpCost pinned = t.Copy(CopyKey(wire::CopyKind::DeviceToHost, bytes), 0, true);
    EXPECT_EQ(pageable.source, CostSource::ShapeScaled);
    EXPECT_NEAR(static_cast<double>(pageable.ns), 2000 + bytes / 9.0, 100);
    EXPECT_NEAR(static_cast<double>(pinned.ns), 2000 + bytes / 55.0, 100);
}

// The engine's estimates are searched once per op and launch facts: two launches of one
// key that move different bytes (what the interposer read from their arguments) are
// charged differently.
TEST_F(KernelCostTableTest, EstimatesFollowEachLaunchsWorkFacts)
{
    {
        ProfileWriter w(scenario.kernels.profile);
        OpKey copy;
        copy.kind = OpKind::Memcpy;
        copy.name = "DtoD";
        for (uint64_t mb : {1, 4, 16, 64})
        {
            copy.bytes = mb << 20;
            w.AddSamples(copy, {static_cast<int64_t>(2000 + 2 * (mb << 20) / 4)}, "t", "record");
        }
        w.Commit();
    }
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const OpKey foreach = KeyForLaunch(
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
        "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::"
        "(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
        "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)",
        {320, 1, 1}, {512, 1, 1}, 0);
    const OpCost full = t.Kernel(foreach, "", "elements=20971520");
    const OpCost small = t.Kernel(foreach, "", "elements=1000000");
    EXPECT_EQ(full.source, CostSource::Bytes);
    EXPECT_EQ(small.source, CostSource::Bytes);
    EXPECT_GT(full.ns, 10 * small.ns);
    EXPECT_EQ(t.Kernel(foreach, "", "elements=1000000").ns, small.ns);
    ASSERT_EQ(t.Misses().size(), 1u) << "one op in the report, launched three times";
    EXPECT_EQ(t.Misses().front().count, 3u);
}

TEST_F(KernelCostTableTest, AProfileOfAnotherGpuIsRefused)
{
    scenario.gpu.model = "H100";
    try
    {
        KernelCostTable t(scenario.gpu, scenario.kernels, scenario.file);
        FAIL() << "accepted an H200 profile for an H100 scenario";
    }
    catch (const ProfileError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("H200"), std::string::npos) << what;
        EXPECT_NE(what.find("H100"), std::string::npos) << what;
        EXPECT_NE(what.find(scenario.file.string()), std::string::npos) << what;
    }
}

TEST_F(KernelCostTableTest, TheMissingFileListsEveryEstimatedOpForTheReplayTool)
{
    KernelCostTable t(scenario.gpu, scenario.kernels);
    const std::string other =
        "cublasGemmEx(m=1024,n=8192,k=1024,op=NN,a=bf16,b=bf16,c=bf16,batch=1)";
    test::PriceLaunch(t, Launch(other, 0, 0));
    test::PriceLaunch(t, Launch(other, 0, 0));
    test::PriceLaunch(t, Launch(kStep, 1024, 256));
    const fs::path file = dir / "missing.json";
    t.WriteMissing(file);
    std::ifstream in(file);
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["gpu_model"], "H200");
    ASSERT_EQ(j["ops"].size(), 1u);
    EXPECT_EQ(j["ops"][0]["kind"], "gemm");
    EXPECT_EQ(j["ops"][0]["name"], other);
    EXPECT_EQ(j["ops"][0]["launches"], 2);
    EXPECT_EQ(j["ops"][0]["estimate"], "shape_scaled");
}

// Samples launched with the same arguments come first, then the program's own, then all.
TEST_F(KernelCostTableTest, SamplesLaunchedWithTheSameArgumentsArePreferred)
{
    {
        ProfileWriter w(scenario.kernels.profile);
        OpKey step;
        step.name = kStep;
        step.grid = {1024, 1, 1};
        step.block = {256, 1, 1};
        w.AddSamples(step, {70000, 71000, 72000}, "args.tsv", "record",
                     {"1=4096", "1=4096", "1=4096"});
        w.AddRun("t", "train.py", "python3 train.py");
        w.Commit();
    }
    KernelCostTable table(scenario.gpu, scenario.kernels);
    table.PreferProgram("train.py");
    wire::KernelLaunch same = Launch(kStep, 1024, 256);
    same.args = "1=4096";
    const OpCost a = test::PriceLaunch(table, same);
    EXPECT_EQ(a.source, CostSource::Measured);
    EXPECT_EQ(a.ns, 71000);
    EXPECT_EQ(table.FromArgs(), 1u);
    EXPECT_EQ(table.FromProgram(), 0u);
    wire::KernelLaunch other = Launch(kStep, 1024, 256);
    other.args = "1=8192"; // never measured: train.py's own samples
    EXPECT_EQ(test::PriceLaunch(table, other).ns, 51000);
    EXPECT_EQ(table.FromArgs(), 1u);
    EXPECT_EQ(table.FromProgram(), 1u);
    KernelCostTable pooled(scenario.gpu, scenario.kernels);
    EXPECT_EQ(test::PriceLaunch(pooled, other).ns, 61000); // median of all 6: (52000 + 70000) / 2
    EXPECT_EQ(pooled.FromArgs(), 0u);
}

TEST_F(KernelCostTableTest, TheSimulatedProgramsOwnMeasurementsArePreferred)
{
    {
        ProfileWriter w(scenario.kernels.profile);
        OpKey step;
        step.name = kStep;
        step.grid = {1024, 1, 1};
        step.block = {256, 1, 1};
        w.AddSamples(step, {90000, 91000, 92000, 93000}, "other.tsv", "record");
        w.AddRun("t", "train.py", "python3 train.py");
        w.AddRun("other.tsv", "other.py", "python3 other.py");
        w.Commit();
    }
    KernelCostTable pooled(scenario.gpu, scenario.kernels);
    EXPECT_EQ(test::PriceLaunch(pooled, Launch(kStep, 1024, 256)).ns, 90000); // median of all 7
    EXPECT_EQ(pooled.FromProgram(), 0u);

    KernelCostTable own(scenario.gpu, scenario.kernels);
    own.PreferProgram("train.py");
    const OpCost k = test::PriceLaunch(own, Launch(kStep, 1024, 256));
    EXPECT_EQ(k.source, CostSource::Measured);
    EXPECT_EQ(k.ns, 51000);
    EXPECT_EQ(own.FromProgram(), 1u);
    // the GEMM was measured by train.py's run too; the copies as well
    EXPECT_EQ(test::PriceLaunch(own, Launch(kGemm, 0, 0)).ns, 180200);
    EXPECT_EQ(own.FromProgram(), 2u);

    KernelCostTable stranger(scenario.gpu, scenario.kernels);
    stranger.PreferProgram("never_recorded.py");
    EXPECT_EQ(test::PriceLaunch(stranger, Launch(kStep, 1024, 256)).ns, 90000);
    EXPECT_EQ(stranger.FromProgram(), 0u);
}

// A library call recorded while the recorder's host fell behind between its own launches
// (cuDNN's attention backward is a memset and three kernels): the slow spans are the
// host's, so the call is charged its lower decile, from the simulated program's own samples
// where it has some; a kernel's slow samples are the GPU's and stay in its median.
TEST_F(KernelCostTableTest, ALibraryCallIsChargedItsSpanWithTheHostAhead)
{
    const std::string bprop = "cudnnSdpaBprop(b=8,h=16,h_kv=16,s_q=1024,s_kv=1024,d_qk=64,d_v=64,"
                              "type=bf16,layout=bshd,causal=1,bias=0,dropout=0,scale=0.125)";
    {
        ProfileWriter w(scenario.kernels.profile);
        OpKey sdpa;
        sdpa.kind = OpKind::Cudnn;
        sdpa.name = bprop;
        // ten spans of train.py: four with the host ahead, six it stretched
        w.AddSamples(
            sdpa, {190000, 190500, 191000, 191500, 200000, 205000, 206000, 210000, 230000, 250000},
            "t", "record");
        w.AddSamples(sdpa, {400000, 410000}, "other.tsv", "record");
        OpKey step;
        step.name = kStep;
        step.grid = {1024, 1, 1};
        step.block = {256, 1, 1};
        w.AddSamples(step, {60000, 61000, 62000}, "t", "record"); // now 6 samples in all
        w.AddRun("t", "train.py", "python3 train.py");
        w.AddRun("other.tsv", "other.py", "python3 other.py");
        w.Commit();
    }
    KernelCostTable own(scenario.gpu, scenario.kernels);
    own.PreferProgram("train.py");
    wire::KernelLaunch call;
    call.name = bprop;
    EXPECT_EQ(test::PriceLaunch(own, call).ns,
              190450); // train.py's 10th percentile (its median: 202500)
    EXPECT_EQ(test::PriceLaunch(own, Launch(kStep, 1024, 256)).ns, 56000); // the kernel's median
    KernelCostTable pooled(scenario.gpu, scenario.kernels);
    EXPECT_EQ(test::PriceLaunch(pooled, call).ns, 190550); // all twelve samples' 10th percentile
}
