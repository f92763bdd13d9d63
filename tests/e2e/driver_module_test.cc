// Kernels loaded through the driver API (cuModuleLoadData, cuModuleGetFunction,
// cuLaunchKernel[Ex]), as PyTorch's NVRTC-compiled elementwise kernels and Triton's
// kernels are: each launch is timed by the function's name, like any kernel.
#include "run_helpers.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace phantora::test;

TEST(DriverModules, KernelsLaunchedByTheDriverApiAreTimedByName)
{
    const auto scenario = WriteFile("driver.toml", "name = \"driver\"\n" + SwitchScenario(1, R"(
[kernels.durations]
driver_scale = "100us"
)") + R"(
[cpu]
time_scale = 0.0
)");
    const auto report = ScratchDir() / "driver-report.json";
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 --report {} -- {}", PHANTORA_CLUSTER,
                               scenario.string(), report.string(), PHANTORA_DRIVER_MODULE_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("load 0\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("get driver_scale 0\n"), std::string::npos) << r.output;
    // A name the PTX does not define: CUDA_ERROR_NOT_FOUND (500), as the driver says.
    EXPECT_NE(r.output.find("get driver_sca 500\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("max threads 1024, dynamic shared 100000\n"), std::string::npos)
        << r.output;
    // Two cuLaunchKernel and one cuLaunchKernelEx, 100 us each, back to back: each took
    // the duration the scenario gives its name (any other kernel takes 1 us here).
    EXPECT_NE(r.output.find("launches 0 took 300.000 us\n"), std::string::npos) << r.output;
    // CUDA_ERROR_INVALID_HANDLE (400) once the module is gone.
    EXPECT_NE(r.output.find("unload 0, unload again 400\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("launch after unload 400\n"), std::string::npos) << r.output;

    std::ifstream in(report);
    const nlohmann::json j = nlohmann::json::parse(in);
    EXPECT_EQ(j["ranks"][0]["kernels"], 3) << j.dump(2);
}
