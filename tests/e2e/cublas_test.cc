// cuBLAS GEMMs are ops on their handle's stream, timed by exact signature or API name.
#include "run_helpers.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace phantora::test;

TEST(Cublas, GemmsAreTimedByShapeThenByApiThenByDefault)
{
    const auto scenario = WriteFile("s.toml", R"toml(
[gpu]
model = "H200"
memory = "141GiB"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
[cpu]
time_scale = 0.0
[topology]
kind = "switch"
gpus = 1
link_bandwidth = "400Gbps"
link_latency = "1us"
[kernels]
default = "7us"
[kernels.durations]
"cublasGemmEx(m=4096,n=4096,k=4096,op=NT,a=bf16,b=bf16,c=bf16,batch=1)" = "200us"
cublasGemmEx = "999us"
cublasSgemm = "50us"
"cublasLtMatmul(m=1024,n=512,k=256,op=TN,a=bf16,b=bf16,c=bf16,batch=1,epilogue=4)" = "30us"
)toml");
    const auto report = ScratchDir() / "report.json";
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 --report {} -- {}", PHANTORA_CLUSTER,
                               scenario.string(), report.string(), PHANTORA_CUBLAS_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    // the exact shape's 200 us (not the API's 999 us), Sgemm's 50 us, the default 7 us,
    // the Lt matmul's 30 us
    EXPECT_NE(r.output.find("gemms took 287.000 us"), std::string::npos) << r.output;
    std::ifstream in(report);
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["kernels"]["from_table"].get<int>(), 3);
    EXPECT_EQ(j["kernels"]["defaulted"].get<int>(), 1);
    EXPECT_TRUE(j["kernels"]["missing"].contains(
        "cublasGemmStridedBatchedEx(m=64,n=64,k=32,op=TN,a=f16,b=f16,c=f16,batch=12)"))
        << j["kernels"].dump();
}
