// The error band: the measured errors of the sources that priced a run, weighted by the
// share of the simulated time each priced.
#include "error_band.h"
#include "gpu_model/profile/op_key.h"
#include "gpu_model/profile/profile_writer.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace
{

namespace fs = std::filesystem;

fs::path Write(const std::string& text)
{
    const fs::path f =
        fs::temp_directory_path() / ("phantora_error_bands_" + std::to_string(::getpid()) + ".tsv");
    std::ofstream(f) << text;
    return f;
}

} // namespace

TEST(ErrorBand, SourcesWeighByTheTimeTheyPriced)
{
    const fs::path file = Write("# measured by leave-one-out\n"
                                "gpu\tpart\tclass\tcount\tmean_abs_error_pct\n"
                                "H200\tgpu\tdefault\t3\t50\n"
                                "H200\thost\tmodel\t3\t10\n"
                                "H100\thost\tmodel\t5\t40\n");
    const auto table = phantora::ErrorBandTable::Read(file);
    phantora::GpuSpec gpu;
    gpu.model = "H200";
    phantora::KernelSpec spec;
    spec.defaultNs = 50'000;
    spec.durationsNs["given_kernel"] = 100'000;
    phantora::KernelCostTable kernels(gpu, spec);
    kernels.Kernel(phantora::profile::KeyForLaunch("given_kernel", {1, 1, 1}, {1, 1, 1}, 0));
    kernels.Kernel(phantora::profile::KeyForLaunch("unknown_kernel", {1, 1, 1}, {1, 1, 1}, 0));
    kernels.Kernel(phantora::profile::KeyForLaunch("unknown_kernel", {1, 1, 1}, {1, 1, 1}, 0));
    phantora::HostTimeProfile host;
    host.origin = phantora::HostTimeOrigin::Model;
    phantora::HostTimeProfile::Charged charged;
    charged.ns[static_cast<std::size_t>(phantora::host_time::Source::Context)] = 200'000;
    // Start-up measured here weighs nothing: no step repeats it.
    charged.ns[static_cast<std::size_t>(phantora::host_time::Source::Measured)] = 9'000'000;
    const auto band = phantora::ComputeErrorBand(kernels, "H200", host, charged, table);
    // GPU: 100 us given by the scenario (no error), 100 us defaulted (±50 %): 200 us ±25 %;
    // host: 200 us of model host time, ±10 %.  The longer part moves between
    // max(150, 180) and max(250, 220) us: ±35 of 200 us.
    EXPECT_NEAR(band.relative, 0.175, 1e-9);
    EXPECT_NE(band.Describe().find("error band: ±17.5% of each simulated time (GPU time 50%: 50% "
                                   "table ±0%, 50% default ±50%; host time 50%: 100% model ±10%)"),
              std::string::npos)
        << band.Describe();

    // On an H100 the defaulted ops have no measured error: they count at 100 %.
    const auto h100 = phantora::ComputeErrorBand(kernels, "H100", host, charged, table);
    // GPU ±50 %, host ±40 %: between max(100, 120) and max(300, 280) us.
    EXPECT_NEAR(h100.relative, 0.45, 1e-9);
    EXPECT_NE(h100.Describe().find("default ±100% (not measured)"), std::string::npos)
        << h100.Describe();
    fs::remove(file);
}

TEST(ErrorBand, AStepTheGpuBoundsKeepsTheGpusErrorUnlessTheHostCouldOvertakeIt)
{
    const fs::path file = Write("H200\tgpu\tdefault\t3\t4\nH200\thost\tmodel\t3\t30\n");
    const auto table = phantora::ErrorBandTable::Read(file);
    phantora::GpuSpec gpu;
    gpu.model = "H200";
    phantora::KernelSpec spec;
    spec.defaultNs = 900'000;
    phantora::KernelCostTable kernels(gpu, spec);
    kernels.Kernel(phantora::profile::KeyForLaunch("k", {1, 1, 1}, {1, 1, 1}, 0));
    phantora::HostTimeProfile host;
    host.origin = phantora::HostTimeOrigin::Model;
    phantora::HostTimeProfile::Charged charged;
    // 900 us of GPU (±4 %) and 100 us of host (±30 %): the host stays far shorter.
    charged.ns[static_cast<std::size_t>(phantora::host_time::Source::Context)] = 100'000;
    EXPECT_NEAR(phantora::ComputeErrorBand(kernels, "H200", host, charged, table).relative, 0.04,
                1e-9);
    // 800 us of host (±30 %) beside it: at +30 % the host (1040) passes the GPU (936).
    charged.ns[static_cast<std::size_t>(phantora::host_time::Source::Context)] = 800'000;
    EXPECT_NEAR(phantora::ComputeErrorBand(kernels, "H200", host, charged, table).relative,
                (1040.0 - 864.0) / 2 / 900.0, 1e-9);
    fs::remove(file);
}

TEST(ErrorBand, AMalformedRowIsRefusedNamingFileAndLine)
{
    const fs::path file = Write("gpu\tpart\tclass\tcount\tmean_abs_error_pct\n"
                                "H200\tgpu\tdefault\t3\tfifty\n");
    try
    {
        phantora::ErrorBandTable::Read(file);
        FAIL() << "read a malformed row";
    }
    catch (const std::runtime_error& e)
    {
        EXPECT_NE(std::string(e.what()).find(file.string() + ":2: mean_abs_error_pct 'fifty'"),
                  std::string::npos)
            << e.what();
    }
    const fs::path part = Write("H200\tdisk\tdefault\t3\t5\n");
    EXPECT_THROW(phantora::ErrorBandTable::Read(part), std::runtime_error);
    fs::remove(file);
}

// Estimates weigh by their op class: a GEMM of a shape the profile lacks is priced from
// the profile's other GEMMs, and its time carries the gemm row's error.
TEST(ErrorBand, EstimatesWeighByTheirOpClass)
{
    const fs::path dir =
        fs::temp_directory_path() / ("phantora_error_band_class_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path db = dir / "H200.sqlite";
    {
        phantora::profile::ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddSamples(
            phantora::profile::KeyForLaunch(
                "cublasGemmEx(m=4096,n=4096,k=4096,op=NN,a=bf16,b=bf16,c=bf16,batch=1)", {}, {}, 0),
            {200'000}, "r", "record");
        w.Commit();
    }
    const fs::path file = Write("H200\tgpu\tgemm\t3\t12\nH200\tgpu\tmeasured\t3\t2\n");
    const auto table = phantora::ErrorBandTable::Read(file);
    phantora::GpuSpec gpu;
    gpu.model = "H200";
    phantora::KernelSpec spec;
    spec.profile = db;
    phantora::KernelCostTable kernels(gpu, spec);
    // measured: 200 us (±2 %); another shape, 8x the flops: estimated, 1.6 ms (±12 %)
    kernels.Kernel(phantora::profile::KeyForLaunch(
        "cublasGemmEx(m=4096,n=4096,k=4096,op=NN,a=bf16,b=bf16,c=bf16,batch=1)", {}, {}, 0));
    const auto est = kernels.Kernel(phantora::profile::KeyForLaunch(
        "cublasGemmEx(m=8192,n=8192,k=8192,op=NN,a=bf16,b=bf16,c=bf16,batch=1)", {}, {}, 0));
    ASSERT_EQ(est.source, phantora::CostSource::ShapeScaled);
    phantora::HostTimeProfile host;
    const auto band = phantora::ComputeErrorBand(kernels, "H200", host, {}, table);
    const double g = 200'000.0 + static_cast<double>(est.ns);
    EXPECT_NEAR(band.relative, (200'000.0 * 0.02 + static_cast<double>(est.ns) * 0.12) / g, 1e-9);
    EXPECT_NE(band.Describe().find("measured ±2%"), std::string::npos) << band.Describe();
    EXPECT_NE(band.Describe().find("gemm ±12%"), std::string::npos) << band.Describe();
    fs::remove(file);
    fs::remove_all(dir);
}

// A measured op the simulated program never ran itself is priced from other programs'
// samples: its time weighs at measured_other's error, the program's own at measured's.
TEST(ErrorBand, OpsOnlyOtherProgramsMeasuredWeighApart)
{
    const fs::path dir =
        fs::temp_directory_path() / ("phantora_error_band_other_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path db = dir / "H200.sqlite";
    const auto mine = phantora::profile::KeyForLaunch("mine", {1, 1, 1}, {128, 1, 1}, 0);
    const auto theirs = phantora::profile::KeyForLaunch("theirs", {1, 1, 1}, {128, 1, 1}, 0);
    {
        phantora::profile::ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddRun("a", "a.py", "python a.py");
        w.AddRun("b", "b.py", "python b.py");
        w.AddSamples(mine, {100'000}, "a", "record");
        w.AddSamples(theirs, {300'000}, "b", "record");
        w.Commit();
    }
    const fs::path file = Write("H200\tgpu\tmeasured\t5\t2\nH200\tgpu\tmeasured_other\t9\t10\n");
    const auto table = phantora::ErrorBandTable::Read(file);
    phantora::GpuSpec gpu;
    gpu.model = "H200";
    phantora::KernelSpec spec;
    spec.profile = db;
    phantora::KernelCostTable kernels(gpu, spec);
    kernels.PreferProgram("a.py");
    kernels.Kernel(mine);
    kernels.Kernel(theirs);
    EXPECT_EQ(kernels.MeasuredElsewhereNs(), 300'000);
    const auto band = phantora::ComputeErrorBand(kernels, "H200", {}, {}, table);
    EXPECT_NEAR(band.relative, (100'000 * 0.02 + 300'000 * 0.10) / 400'000.0, 1e-9);
    EXPECT_NE(band.Describe().find("25% measured ±2%, 75% measured_other ±10%"), std::string::npos)
        << band.Describe();
    // A table from before the split: measured's error for both.
    const fs::path old = Write("H200\tgpu\tmeasured\t5\t2\n");
    EXPECT_NEAR(
        phantora::ComputeErrorBand(kernels, "H200", {}, {}, phantora::ErrorBandTable::Read(old))
            .relative,
        0.02, 1e-9);
    fs::remove(file);
    fs::remove_all(dir);
}

TEST(ErrorBand, TheCommittedTableHasEveryClassAnEstimatedRunUses)
{
    // bench/error_bands.py writes it; phantora-cluster reads it for every run's band.
    const auto table = phantora::ErrorBandTable::Read(std::filesystem::path(PHANTORA_SOURCE_DIR) /
                                                      "profiles" / "error_bands.tsv");
    for (const char* gpu : {"H100", "H200"})
    {
        for (const char* cls : {"measured", "measured_other", "default", "elementwise", "reduction",
                                "norm", "optimizer", "gemm", "cudnn", "memcpy_htod"})
        {
            EXPECT_TRUE(table.Error(gpu, "gpu", cls)) << gpu << " " << cls;
        }
        for (const char* cls : {"recording", "model"})
        {
            const auto e = table.Error(gpu, "host", cls);
            ASSERT_TRUE(e) << gpu << " " << cls;
            EXPECT_GT(*e, 0.0) << "a measured error of exactly 0 is no measurement";
        }
    }
}

// A predicted GPU's ops are the measured GPU's, scaled: that GPU's rows price them, and the
// measured error of predictions from its profile comes on top.
TEST(ErrorBand, APredictedGpuAddsThePredictionsErrorToTheMeasuredGpus)
{
    const fs::path file = Write("H100\tgpu\tmeasured\t5\t2\nH100\tgpu\tpredicted\t9\t6\n"
                                "H100\thost\tmodel\t3\t10\n");
    const auto table = phantora::ErrorBandTable::Read(file);
    const fs::path db = fs::temp_directory_path() /
                        ("phantora_band_h100_" + std::to_string(::getpid()) + ".sqlite");
    fs::remove(db);
    {
        phantora::profile::ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H100");
        w.AddSamples(phantora::profile::KeyForLaunch("k", {1, 1, 1}, {1, 1, 1}, 0), {100'000}, "t",
                     "record");
        w.Commit();
    }
    phantora::GpuSpec source;
    source.model = "H100";
    source.hbmBitsPerSecond = 3.35e12 * 8;
    source.peakTflops["bf16"] = 989.4;
    phantora::GpuSpec target = source;
    target.model = "B200";
    target.hbmBitsPerSecond = 7.7e12 * 8;
    target.peakTflops["bf16"] = 2250;
    phantora::KernelSpec spec;
    spec.defaultNs = 1000;
    spec.profile = db;
    spec.profileOf = source;
    phantora::KernelCostTable kernels(target, spec);
    kernels.Kernel(phantora::profile::KeyForLaunch("k", {1, 1, 1}, {1, 1, 1}, 0));
    phantora::HostTimeProfile host;
    host.origin = phantora::HostTimeOrigin::Model;
    phantora::HostTimeProfile::Charged charged;
    const auto band = phantora::ComputeErrorBand(kernels, "B200", host, charged, table);
    // the GPU part alone: 2 % measured on the H100 plus 6 % predicting from it
    EXPECT_NEAR(band.relative, 0.08, 1e-9);
    EXPECT_NE(band.Describe().find("measured+predicted ±8%"), std::string::npos) << band.Describe();
    fs::remove(db);
    fs::remove(file);
}
