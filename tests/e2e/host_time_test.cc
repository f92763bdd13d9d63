// The host-time profile end to end: a program whose real CPU time between GPU calls
// changes from run to run is simulated with that time recorded in its profile, and its
// steps come out the same every time, at exactly what the recording says.
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/program_name.h"
#include "run_helpers.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace phantora::test;
namespace fs = std::filesystem;

namespace
{

constexpr int kSteps = 6;

/// A profile holding the program's two kernels (10 and 20 us) and a recording of its host
/// time: 300 us after each synchronisation, 500 after the first launch, 700 after the
/// second.  The labels' sites are not the simulated binary's, so the lookups go by the
/// calls alone (host_gap_table.h's third level).  \p fillerGaps: another thread of the
/// recording with that many gaps among 64 other calls, which make the table the rank is
/// sent larger.
fs::path RecordedProfile(const std::string& command, int fillerGaps = 0)
{
    const fs::path db = ScratchDir() / "host_time.sqlite";
    phantora::profile::ProfileWriter w(db);
    w.SetMetadata("gpu_model", "H200");
    const std::string run = "host_time_program.tsv";
    w.AddRun(run, phantora::profile::ProgramName(command), command);
    for (const auto& [name, ns] :
         {std::pair{"first_kernel(float*)", 10000}, std::pair{"second_kernel(float*)", 20000}})
    {
        phantora::profile::OpKey k;
        k.kind = phantora::profile::OpKind::Kernel;
        k.name = name;
        k.grid = {1, 1, 1};
        k.block = {256, 1, 1};
        w.AddSamples(k, {ns, ns, ns}, run, "record");
    }
    phantora::host_time::Sequence s;
    int64_t before = -1;
    for (int step = 0; step < 8; ++step)
    {
        for (const auto& [label, after] :
             {std::pair{"launch:first_kernel(float*)@recorded+0x10", 500'000},
              std::pair{"launch:second_kernel(float*)@recorded+0x20", 700'000},
              std::pair{"sync:device@recorded+0x30", 300'000}})
        {
            s.labels.push_back(label);
            s.gapBeforeNs.push_back(before);
            before = after;
        }
    }
    std::map<std::string, phantora::host_time::Sequence> threads{{"1.1", s}};
    if (fillerGaps > 0)
    {
        // 64 calls in a pseudo-random order: each gap's contexts, 1 to 8 calls deep at
        // three levels (host_gap_table.h), are keys of their own, about 24 a gap
        phantora::host_time::Sequence& filler = threads["1.2"];
        uint64_t state = 0x9e3779b97f4a7c15ull;
        for (int i = 0; i < fillerGaps; ++i)
        {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            const unsigned call = static_cast<unsigned>(state >> 58);
            filler.labels.push_back(
                fmt::format("launch:filler_{}(float*)@recorded+0x{:x}", call, 0x100 + call));
            filler.gapBeforeNs.push_back(i == 0 ? -1 : 1000 + i % 977);
        }
    }
    w.SetHostGaps(run, threads);
    w.Commit();
    return db;
}

std::string Scenario(const fs::path& profile, const std::string& hostTime)
{
    return HostTimeScenario(profile, hostTime, "1s");
}

std::map<std::pair<int, int>, int64_t> Simulate(const fs::path& scenario, const std::string& env,
                                                nlohmann::json* report = nullptr)
{
    const fs::path reportFile = ScratchDir() / "report.json";
    const CommandResult r = RunCommand(
        fmt::format("{} {} --scenario {} --nproc 1 --report {} -- {} {}", env, PHANTORA_CLUSTER,
                    scenario.string(), reportFile.string(), PHANTORA_HOST_TIME_PROGRAM, kSteps));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    if (report)
    {
        std::ifstream in(reportFile);
        *report = nlohmann::json::parse(in);
    }
    return StepTimesNs(r.output);
}

} // namespace

TEST(HostTime, RecordedHostTimeMakesStepsIndependentOfTheSimulatingCpu)
{
    const std::string command = fmt::format("{} {}", PHANTORA_HOST_TIME_PROGRAM, kSteps);
    const fs::path profile = RecordedProfile(command);
    const fs::path scenario = WriteFile("recorded.toml", Scenario(profile, "recorded"));
    nlohmann::json report;
    const auto quiet = Simulate(scenario, "", &report);
    // Real sleeps before every intercepted call, on top of the program's random busy work.
    const auto jittered = Simulate(scenario, "PHANTORA_JITTER_US=200");
    ASSERT_EQ(quiet.size(), static_cast<std::size_t>(kSteps));
    for (int step = 1; step < kSteps; ++step)
    {
        // The clock read at a step's start charges the 300 us after the synchronisation;
        // then 500 and 700 us until the next synchronisation (the GPU is long done), and
        // the read at the end charges the next 300 us.
        EXPECT_EQ(quiet.at({0, step}), 1'500'000) << "step " << step;
        EXPECT_EQ(jittered.at({0, step}), quiet.at({0, step})) << "step " << step;
    }
    const auto& sources = report["host_time"]["by_source"];
    EXPECT_GT(sources["context (no site)"]["gaps"].get<uint64_t>(), 10u) << report.dump(2);
    EXPECT_EQ(sources["context"]["gaps"].get<uint64_t>(), 0u) << report.dump(2);
}

TEST(HostTime, MeasuredHostTimeFollowsTheProgramsRealCpuWork)
{
    // The same program and profile with the recording set aside: the random busy work
    // (up to 2 ms three times a step) shows in the steps, which differ from each other.
    const std::string command = fmt::format("{} {}", PHANTORA_HOST_TIME_PROGRAM, kSteps);
    const fs::path profile = RecordedProfile(command);
    const auto steps = Simulate(WriteFile("measured.toml", Scenario(profile, "measured")), "");
    ASSERT_EQ(steps.size(), static_cast<std::size_t>(kSteps));
    std::set<int64_t> distinct;
    for (int step = 1; step < kSteps; ++step)
    {
        distinct.insert(steps.at({0, step}));
    }
    EXPECT_GT(distinct.size(), 1u);
}

TEST(HostTime, AProgramTheProfileNeverRecordedIsChargedTheModelAndItsStepsRepeat)
{
    // The profile recorded another program (its name and command are not this one's), so
    // this program's host time comes from the model of what was recorded: its calls match
    // the other program's by name, and the random busy work between them no longer shows.
    const fs::path profile = RecordedProfile("python3 some_other_script.py");
    const fs::path scenario = WriteFile("model.toml", Scenario(profile, "recorded"));
    nlohmann::json report;
    const auto quiet = Simulate(scenario, "", &report);
    const auto jittered = Simulate(scenario, "PHANTORA_JITTER_US=200");
    ASSERT_EQ(quiet.size(), static_cast<std::size_t>(kSteps));
    EXPECT_EQ(report["host_time"]["origin"], "model") << report["host_time"].dump(2);
    EXPECT_EQ(report["host_time"]["model_programs"], 1) << report["host_time"].dump(2);
    for (int step = 1; step < kSteps; ++step)
    {
        EXPECT_EQ(quiet.at({0, step}), 1'500'000) << "step " << step;
        EXPECT_EQ(jittered.at({0, step}), quiet.at({0, step})) << "step " << step;
    }
}

TEST(HostTime, AMillionGapTableReachesTheRankWhole)
{
    // The recording of the program with 70,000 more gaps whose contexts make over a million
    // keys: the table (16 bytes a key, so 16 or more chunks of wire::kMaxTableChunkBytes)
    // goes over the socket to the rank, which reads it in chunks; the steps are priced from
    // it exactly as from the small table, which they would not be if any chunk were lost or
    // the rank had refused the table.
    const std::string command = fmt::format("{} {}", PHANTORA_HOST_TIME_PROGRAM, kSteps);
    const fs::path profile = RecordedProfile(command, 70'000);
    nlohmann::json report;
    const auto steps =
        Simulate(WriteFile("million.toml", Scenario(profile, "recorded")), "", &report);
    ASSERT_EQ(steps.size(), static_cast<std::size_t>(kSteps));
    EXPECT_EQ(report["host_time"]["origin"], "recording") << report["host_time"].dump(2);
    EXPECT_GE(report["host_time"]["table_keys"].get<uint64_t>(), 1'000'000u)
        << report["host_time"].dump(2);
    for (int step = 1; step < kSteps; ++step)
    {
        EXPECT_EQ(steps.at({0, step}), 1'500'000) << "step " << step;
    }
    EXPECT_GT(report["host_time"]["by_source"]["context (no site)"]["gaps"].get<uint64_t>(), 10u)
        << report["host_time"].dump(2);
}
