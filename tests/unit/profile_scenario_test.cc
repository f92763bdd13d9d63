// The scenario keys of the profile cache: [kernels] profile (relative to the scenario
// file) and [gpu] peak_tflops_* for the roofline.
#include "scenario_loader.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace phantora;
namespace fs = std::filesystem;

namespace
{

const char* kScenario = R"toml([gpu]
model = "H200"
memory = "141GiB"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
peak_tflops_bf16 = 989.4
peak_tflops_fp8 = 1978.9
[topology]
kind = "switch"
gpus = 1
link_bandwidth = "400Gbps"
link_latency = "1us"
[kernels]
default = "7us"
profile = "PROFILE"
)toml";

fs::path Write(const fs::path& file, const std::string& profile)
{
    std::string text = kScenario;
    text.replace(text.find("PROFILE"), 7, profile);
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file;
}

} // namespace

TEST(ProfileScenario, TheProfileIsFoundBesideTheScenarioAndPeaksAreRead)
{
    const fs::path dir =
        fs::temp_directory_path() / ("phantora-prof-scn-" + std::to_string(getpid()));
    fs::create_directories(dir / "profiles");
    std::ofstream(dir / "profiles" / "H200.sqlite") << "";
    const Scenario s = LoadScenario(Write(dir / "scenarios" / "s.toml", "../profiles/H200.sqlite"));
    EXPECT_TRUE(fs::equivalent(s.kernels.profile, dir / "profiles" / "H200.sqlite"))
        << s.kernels.profile;
    EXPECT_DOUBLE_EQ(s.gpu.peakTflops.at("bf16"), 989.4);
    EXPECT_DOUBLE_EQ(s.gpu.peakTflops.at("e4m3"), 1978.9);
    EXPECT_DOUBLE_EQ(s.gpu.peakTflops.at("e5m2"), 1978.9);
    EXPECT_EQ(s.gpu.peakTflops.count("f32"), 0u);
}

TEST(ProfileScenario, AMissingProfileNamesTheFileLineAndKey)
{
    const fs::path dir =
        fs::temp_directory_path() / ("phantora-prof-scn2-" + std::to_string(getpid()));
    const fs::path file = Write(dir / "s.toml", "nowhere.sqlite");
    try
    {
        LoadScenario(file);
        FAIL() << "accepted a profile that does not exist";
    }
    catch (const ScenarioError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find(file.string() + ":15"), std::string::npos) << what;
        EXPECT_NE(what.find("kernels.profile"), std::string::npos) << what;
        EXPECT_NE(what.find("nowhere.sqlite"), std::string::npos) << what;
    }
}
