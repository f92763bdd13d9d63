// Recorded read-back values end to end (host_time/readback_table.h): a program that
// launches a clipping kernel only when the "norm" it reads back exceeds 1 takes that branch
// in simulation when its recording read 2.5 there, and not when read-backs are off; an
// integer it reads is served only with readback = "all"; a value it wrote itself is read
// back as written, whatever the recording says.
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/program_name.h"
#include "run_helpers.h"

#include <cstring>
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

constexpr int kSteps = 4;

template <class T> std::string Bytes(T v)
{
    std::string s(sizeof v, '\0');
    std::memcpy(s.data(), &v, sizeof v);
    return s;
}

/// A profile holding the program's kernels and a recording of it on a GPU, where every
/// step read a norm of 2.5 (and so clipped), a count of 7, and 9 at its own buffer (it
/// wrote 0.5 there: a recording cannot say so, the test makes it differ on purpose).  The
/// labels' sites are not the simulated binary's, so lookups go by the calls alone.
fs::path RecordedProfile(const std::string& command)
{
    const fs::path db = ScratchDir() / "readback.sqlite";
    fs::remove(db);
    phantora::profile::ProfileWriter w(db);
    w.SetMetadata("gpu_model", "H200");
    const std::string run = "readback_program.tsv";
    w.AddRun(run, phantora::profile::ProgramName(command), command);
    for (const char* name : {"norm_kernel(float*)", "clip_kernel(float*)", "count_kernel(int*)"})
    {
        phantora::profile::OpKey k;
        k.kind = phantora::profile::OpKind::Kernel;
        k.name = name;
        k.grid = {1, 1, 1};
        k.block = {1, 1, 1};
        w.AddSamples(k, {5000, 5000, 5000}, run, "record");
    }
    phantora::host_time::Sequence s;
    for (int step = 0; step < kSteps + 2; ++step)
    {
        const std::size_t base = s.labels.size();
        for (const char* label :
             {"launch:norm_kernel(float*)@recorded+0x10", "copy:sync@recorded+0x20",
              "launch:clip_kernel(float*)@recorded+0x30", "launch:count_kernel(int*)@recorded+0x40",
              "copy:async@recorded+0x50", "sync:stream@recorded+0x60", "copy:sync@recorded+0x70",
              "copy:sync@recorded+0x80", "sync:device@recorded+0x90"})
        {
            s.labels.push_back(label);
            s.gapBeforeNs.push_back(s.labels.size() == 1 ? -1 : 2000);
        }
        s.reads[base + 1] = Bytes(2.5f);
        s.reads[base + 4] = Bytes(int32_t{7});
        s.reads[base + 7] = Bytes(9.0f);
    }
    w.SetHostGaps(run, {{"1.1", s}});
    w.Commit();
    return db;
}

std::string Scenario(const fs::path& profile, const std::string& readback)
{
    return HostTimeScenario(profile, "recorded", "10us",
                            readback.empty() ? ""
                                             : "[workload]\nreadback = \"" + readback + "\"\n");
}

struct Step
{
    float norm;
    int clipped;
    int count;
    float own;
};

/// The program's steps and the run report, simulated with [workload] readback = \p readback
/// ("": the default).
std::vector<Step> Simulate(const std::string& readback, nlohmann::json& report)
{
    const std::string command = fmt::format("{} {}", PHANTORA_READBACK_PROGRAM, kSteps);
    const fs::path profile = RecordedProfile(command);
    const fs::path scenario =
        WriteFile("readback_" + (readback.empty() ? "default" : readback) + ".toml",
                  Scenario(profile, readback));
    const fs::path reportFile = ScratchDir() / "readback_report.json";
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 --report {} -- {}", PHANTORA_CLUSTER,
                               scenario.string(), reportFile.string(), command));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    std::ifstream in(reportFile);
    report = nlohmann::json::parse(in);
    std::vector<Step> steps;
    const std::regex line(R"(step (\d+) norm (\S+) clipped (\d) count (\d+) own (\S+))");
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), line), end; it != end; ++it)
    {
        steps.push_back(
            {std::stof((*it)[2]), std::stoi((*it)[3]), std::stoi((*it)[4]), std::stof((*it)[5])});
    }
    EXPECT_EQ(steps.size(), static_cast<std::size_t>(kSteps)) << r.output;
    return steps;
}

} // namespace

TEST(Readback, TheProgramBranchesOnTheValueItsRecordingReadBack)
{
    nlohmann::json report;
    for (const Step& s : Simulate("", report))
    {
        EXPECT_EQ(s.norm, 2.5f);
        EXPECT_EQ(s.clipped, 1) << "the real run clipped: so does the simulated one";
        EXPECT_EQ(s.count, 0) << "an integer is not served by the default, \"float\"";
        EXPECT_EQ(s.own, 0.5f) << "what the program wrote wins over the recording";
    }
    const auto& rb = report["host_time"]["readbacks"];
    EXPECT_EQ(rb["served"].get<uint64_t>(), static_cast<uint64_t>(kSteps)) << rb.dump();
    EXPECT_EQ(rb["zeros"].get<uint64_t>(), static_cast<uint64_t>(kSteps)) << rb.dump();
}

TEST(Readback, AllServesIntegersAndZerosServesNothing)
{
    nlohmann::json report;
    for (const Step& s : Simulate("all", report))
    {
        EXPECT_EQ(s.clipped, 1);
        EXPECT_EQ(s.count, 7);
        EXPECT_EQ(s.own, 0.5f);
    }
    EXPECT_EQ(report["host_time"]["readbacks"]["served"].get<uint64_t>(),
              static_cast<uint64_t>(2 * kSteps));
    for (const Step& s : Simulate("zeros", report))
    {
        EXPECT_EQ(s.norm, 0.0f);
        EXPECT_EQ(s.clipped, 0) << "kernels compute nothing: the norm reads 0";
        EXPECT_EQ(s.count, 0);
        EXPECT_EQ(s.own, 0.5f);
    }
    EXPECT_EQ(report["host_time"]["readbacks"]["served"].get<uint64_t>(), 0u);
    EXPECT_EQ(report["host_time"]["readbacks"]["zeros"].get<uint64_t>(),
              static_cast<uint64_t>(2 * kSteps));
}
