// A kernel launched at one launch shape with two row lengths, simulated with a profile
// that measured it at both: each launch takes the median of its own arguments' samples;
// a profile without argument facts gives every launch the pooled median.
#include "gpu_model/profile/profile_writer.h"
#include "run_helpers.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace phantora::test;
namespace fs = std::filesystem;

namespace
{
// args_rows(x, rows=64, cols, scale=0.5f, flag=1, stride=cols): the pointer (>= 2^32),
// the float (bits >= 2^23) and the char are left out of the facts.
std::string Facts(int cols)
{
    return fmt::format("1=64,2={},5={}", cols, cols);
}

nlohmann::json SimulateWith(const fs::path& profile)
{
    const auto scenario = WriteFile("args.toml", ProfileOnlyScenario("H200", profile));
    const auto report = ScratchDir() / "args-report.json";
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 --report {} -- {}", PHANTORA_CLUSTER,
                               scenario.string(), report.string(), PHANTORA_LAUNCH_ARGS_PROGRAM));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    std::ifstream in(report);
    return nlohmann::json::parse(in)["kernels"];
}

fs::path Profile(const std::string& name, bool withArgs)
{
    using namespace phantora::profile;
    const fs::path db = ScratchDir() / name;
    fs::remove(db);
    ProfileWriter w(db);
    w.SetMetadata("gpu_model", "H200");
    OpKey rows;
    rows.name = "args_rows(float*, int, int, float, char, long)";
    rows.grid = {64, 1, 1};
    rows.block = {128, 1, 1};
    auto facts = [&](int cols) { return std::vector<std::string>(3, withArgs ? Facts(cols) : ""); };
    w.AddSamples(rows, {10000, 10000, 10000}, "r.tsv", "record", facts(100));
    w.AddSamples(rows, {40000, 40000, 40000}, "r.tsv", "record", facts(400));
    OpKey mixed;
    mixed.name = "args_mixed(char, short, int, long, double, float*, Five)";
    mixed.grid = {1, 1, 1};
    mixed.block = {32, 1, 1};
    w.AddSamples(mixed, {2000}, "r.tsv", "record");
    w.Commit();
    return db;
}
} // namespace

TEST(LaunchArgs, EachLaunchTakesTheMedianOfItsOwnArguments)
{
    const auto k = SimulateWith(Profile("args.sqlite", true));
    // 10 + 40 + 10 us at their row lengths, and the other kernel's 2 us
    EXPECT_DOUBLE_EQ(k["coverage"]["by_source"]["measured"]["gpu_time_s"].get<double>(), 62e-6)
        << k.dump(1);
    EXPECT_EQ(k["measured_at_arguments"].get<int>(), 3) << k.dump(1);
    EXPECT_EQ(k["measured"].get<int>(), 4) << k.dump(1);
}

TEST(LaunchArgs, WithoutArgumentFactsEveryLaunchTakesThePooledMedian)
{
    const auto k = SimulateWith(Profile("pooled.sqlite", false));
    // the median of 10, 10, 10, 40, 40, 40 us is 25 us
    EXPECT_DOUBLE_EQ(k["coverage"]["by_source"]["measured"]["gpu_time_s"].get<double>(), 77e-6)
        << k.dump(1);
    EXPECT_EQ(k["measured_at_arguments"].get<int>(), 0) << k.dump(1);
}
