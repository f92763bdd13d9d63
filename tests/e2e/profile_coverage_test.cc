// Simulations with the committed measured profiles: the bundled CUDA example and the
// cuBLAS program are timed entirely from measurements, GEMMs take exactly their
// measured medians, and the report and the missing-ops file say what was estimated.
#include "gpu_model/profile/profile_reader.h"
#include "run_helpers.h"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

using namespace phantora::test;
namespace fs = std::filesystem;

namespace
{
nlohmann::json ReadJson(const fs::path& file)
{
    std::ifstream in(file);
    return nlohmann::json::parse(in);
}
} // namespace

class ProfileCoverage : public ::testing::TestWithParam<std::string>
{
};

TEST_P(ProfileCoverage, TheCudaExampleIsTimedEntirelyFromMeasurements)
{
    std::string lower = GetParam();
    for (char& c : lower)
    {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    const fs::path scenario =
        fs::path(PHANTORA_SOURCE_DIR) / "scenarios" / (lower + "-profile.toml");
    const auto report = ScratchDir() / "report.json";
    const auto missing = ScratchDir() / "missing.json";
    const CommandResult r = RunCommand(fmt::format(
        "{} --scenario {} --nproc 2 --report {} --missing {} -- {} 16777216 3", PHANTORA_CLUSTER,
        scenario.string(), report.string(), missing.string(), PHANTORA_CUDA_EXAMPLE));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto j = ReadJson(report);
    const auto& k = j["kernels"];
    EXPECT_DOUBLE_EQ(k["coverage"]["measured_share"].get<double>(), 1.0) << k.dump(1);
    EXPECT_EQ(k["defaulted"].get<int>(), 0);
    // 3 steps x 2 ranks of the step kernel, plus each rank's memset and read-back copy
    EXPECT_EQ(k["measured"].get<int>(), 2 * (3 + 2)) << k.dump(1);
    EXPECT_TRUE(k["top_misses"].empty()) << k.dump(1);
    EXPECT_TRUE(ReadJson(missing)["ops"].empty());
    EXPECT_NE(r.output.find("100.0% of the GPU time measured"), std::string::npos) << r.output;
}

// A GEMM is a library call: charged the lower decile of its recorded spans (OpStats::OnStreamNs).
TEST_P(ProfileCoverage, GemmsTakeTheirMeasuredLowerDeciles)
{
    const fs::path profile = fs::path(PHANTORA_SOURCE_DIR) / "profiles" / (GetParam() + ".sqlite");
    const auto scenario = WriteFile("s.toml", ProfileOnlyScenario(GetParam(), profile));
    const phantora::profile::ProfileReader p(profile);
    double expectedUs = 0;
    for (const char* gemm :
         {"cublasGemmEx(m=4096,n=4096,k=4096,op=NT,a=bf16,b=bf16,c=bf16,batch=1)",
          "cublasSgemm(m=128,n=128,k=128,op=NN,a=f32,b=f32,c=f32,batch=1)",
          "cublasGemmStridedBatchedEx(m=64,n=64,k=32,op=TN,a=f16,b=f16,c=f16,batch=12)",
          "cublasLtMatmul(m=1024,n=512,k=256,op=TN,a=bf16,b=bf16,c=bf16,batch=1,epilogue=4)"})
    {
        phantora::profile::OpKey key;
        key.kind = phantora::profile::OpKind::Gemm;
        key.name = gemm;
        const auto* s = p.Find(key);
        ASSERT_NE(s, nullptr) << gemm;
        expectedUs += static_cast<double>(std::llround(s->OnStreamNs({}, true))) / 1000.0;
    }
    const auto report = ScratchDir() / "report.json";
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 --report {} -- {}", PHANTORA_CLUSTER,
                               scenario.string(), report.string(), PHANTORA_CUBLAS_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find(fmt::format("gemms took {:.3f} us", expectedUs)), std::string::npos)
        << r.output;
    EXPECT_EQ(ReadJson(report)["kernels"]["measured"].get<int>(), 4);
}

INSTANTIATE_TEST_SUITE_P(Gpus, ProfileCoverage, ::testing::Values("H100", "H200"));

// A scenario of one GPU with another GPU's profile is refused before any rank starts, and
// the message says what to do: the profile of the scenario's GPU beside it, or a scenario
// of the profile's GPU.
TEST(ProfileOfAnotherGpu, IsRefusedNamingTheProfileToUseInstead)
{
    const fs::path profiles = fs::path(PHANTORA_SOURCE_DIR) / "profiles";
    const fs::path scenario = WriteFile("h200-with-h100-profile.toml",
                                        ProfileOnlyScenario("H200", profiles / "H100.sqlite"));
    const CommandResult r = RunCommand(
        fmt::format("{} --scenario {} --nproc 1 2>&1", PHANTORA_CLUSTER, scenario.string()));
    EXPECT_NE(r.exitCode, 0) << r.output;
    // The message is wrapped at 160 characters, at spaces: read it as one line.
    const std::string flat = std::regex_replace(r.output, std::regex("\n  +"), " ");
    EXPECT_NE(flat.find("was measured on \"H100\" but the scenario"), std::string::npos)
        << r.output;
    EXPECT_NE(flat.find("Use " + (profiles / "H200.sqlite").string()), std::string::npos)
        << r.output;
    EXPECT_NE(flat.find("[gpu] model = \"H100\""), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("[rank 0]"), std::string::npos) << "no rank may start\n" << r.output;
}
