// The host-time model: what a program the profile never recorded is charged between its
// GPU calls, learned from every program the profile did record (host_time_model.h), and
// how the bridge chooses between a recording, the model and this machine's clock.
#include "gpu_model/profile/profile_reader.h"
#include "gpu_model/profile/profile_writer.h"
#include "host_time/host_time_model.h"
#include "host_time_profile.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{

namespace fs = std::filesystem;
using namespace phantora::host_time;

/// One thread: a launch of kernel k at site 0x10, then a sync, \p steps times; the gap
/// after each launch is \p afterLaunch, after each sync \p afterSync.
Sequence Thread(int steps, int64_t afterLaunch, int64_t afterSync,
                const std::string& kernel = "launch:k@libtorch_cuda.so+0x10")
{
    Sequence s;
    int64_t before = -1;
    for (int i = 0; i < steps; ++i)
    {
        for (const auto& [label, after] : {std::pair{kernel, afterLaunch},
                                           std::pair{std::string("sync:device@x+0x20"), afterSync}})
        {
            s.labels.push_back(label);
            s.gapBeforeNs.push_back(before);
            s.callNs.push_back(-1);
            before = after;
        }
    }
    return s;
}

Context After(std::initializer_list<const char*> labels)
{
    Context c;
    for (const char* l : labels)
    {
        c.Push(HostLabel::FromText(l));
    }
    return c;
}

GapSamples SamplesOf(const std::vector<Sequence>& threads, double scale = 1.0)
{
    GapSamples s;
    for (const auto& t : threads)
    {
        s.Add(t, scale);
    }
    return s;
}

} // namespace

TEST(HostTimeModel, EachProgramCountsOnceWhateverItsNumberOfRecordings)
{
    // Pooled, the three recordings of the first program would set every median to 100 us;
    // as programs, the median of 100, 200 and 400 is 200.
    HostTimeModel model;
    model.AddProgram(SamplesOf(
        {Thread(10, 100'000, 5'000), Thread(10, 100'000, 5'000), Thread(10, 100'000, 5'000)}));
    model.AddProgram(SamplesOf({Thread(10, 400'000, 5'000)}));
    model.AddProgram(SamplesOf({Thread(10, 200'000, 5'000)}));
    EXPECT_EQ(model.Programs(), 3u);
    const GapTable t = model.Build();
    const auto hit = t.Lookup(After({"sync:device@x+0x20", "launch:k@libtorch_cuda.so+0x10"}));
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->ns, 200'000);
    EXPECT_EQ(hit->source, Source::Context);
}

TEST(HostTimeModel, AContextOneProgramRanIsThatProgramsFigure)
{
    HostTimeModel model;
    model.AddProgram(SamplesOf({Thread(10, 100'000, 5'000)}));
    model.AddProgram(SamplesOf({Thread(10, 300'000, 7'000, "launch:other@libtorch_cuda.so+0x99")}));
    const GapTable t = model.Build();
    const auto own = t.Lookup(After({"sync:device@x+0x20", "launch:other@libtorch_cuda.so+0x99"}));
    ASSERT_TRUE(own);
    EXPECT_EQ(own->ns, 300'000);
    // A launch neither program made, from another module: only its kind is known, and
    // that is the median of the two programs' figures for a launch's kind.
    const auto kind = t.Lookup(After({"launch:unseen@mine.so+0x1"}));
    ASSERT_TRUE(kind);
    EXPECT_EQ(kind->source, Source::Kind);
    EXPECT_EQ(kind->ns, 200'000);
}

TEST(HostTimeModel, GapsAreScaledToTheReferenceHost)
{
    // A recording on a host twice as slow, scaled by one half, says what the reference
    // host takes.
    HostTimeModel model;
    model.AddProgram(SamplesOf({Thread(4, 300'000, 10'000)}, 0.5));
    const auto hit =
        model.Build().Lookup(After({"sync:device@x+0x20", "launch:k@libtorch_cuda.so+0x10"}));
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->ns, 150'000);
}

TEST(HostTimeModel, NoProgramNoTable)
{
    HostTimeModel model;
    model.AddProgram(GapSamples{});
    EXPECT_EQ(model.Programs(), 0u);
    EXPECT_TRUE(model.Build().Empty());
}

namespace
{

/// A profile that recorded two programs' host time: a.py twice (on hosts of speed 100 and
/// 200 ns a round), b.py once (speed 100).
fs::path TwoPrograms()
{
    const fs::path db = fs::temp_directory_path() /
                        ("phantora_host_time_model_" + std::to_string(::getpid()) + ".sqlite");
    fs::remove(db);
    phantora::profile::ProfileWriter w(db);
    w.SetMetadata("gpu_model", "H200");
    const auto add =
        [&](const std::string& run, const std::string& program, double speed, int64_t afterLaunch)
    {
        w.AddRun(run, program, "python3 " + program);
        w.SetRunHostSpeed(run, speed);
        w.SetHostGaps(run, {{"1.1", Thread(6, afterLaunch, 10'000)}});
    };
    add("a1.tsv", "a.py", 100, 100'000);
    add("a2.tsv", "a.py", 200, 200'000); // twice as slow a host: the same 100 us on the first
    add("b.tsv", "b.py", 100, 300'000);
    w.Commit();
    return db;
}

} // namespace

TEST(HostTimeProfile, AProgramWithNoRecordingIsChargedTheModelOfTheOthers)
{
    const fs::path db = TwoPrograms();
    const phantora::profile::ProfileReader reader(db);
    phantora::CpuSpec cpu;
    cpu.localScale = 1.0; // no host-speed benchmark in a unit test
    const auto p = phantora::HostTimeProfile::Prepare(&reader, {"python3", "mine.py"}, 1, cpu);
    EXPECT_EQ(p.origin, phantora::HostTimeOrigin::Model);
    EXPECT_EQ(p.modelPrograms, 2u);
    EXPECT_EQ(p.modelRuns, 3u);
    EXPECT_TRUE(p.runs.empty());
    EXPECT_TRUE(p.readbacks.empty()) << "read-back values are a recorded program's own";
    // The reference host is the median speed of the three runs (100 ns): a2's 200 us are
    // 100 us there, so a.py's figure is 100 us and the model's the median of a.py and b.py.
    const GapTable t = GapTable::Parse(p.table);
    const auto hit = t.Lookup(After({"sync:device@x+0x20", "launch:k@libtorch_cuda.so+0x10"}));
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->ns, 200'000);

    const auto recorded = phantora::HostTimeProfile::Prepare(&reader, {"python3", "b.py"}, 1, cpu);
    EXPECT_EQ(recorded.origin, phantora::HostTimeOrigin::Recording);
    EXPECT_EQ(recorded.runs, std::vector<std::string>{"b.tsv"});

    cpu.hostTime = phantora::HostTimeMode::Model;
    const auto model = phantora::HostTimeProfile::Prepare(&reader, {"python3", "b.py"}, 1, cpu);
    EXPECT_EQ(model.origin, phantora::HostTimeOrigin::Model);

    cpu.hostTime = phantora::HostTimeMode::Measured;
    const auto measured =
        phantora::HostTimeProfile::Prepare(&reader, {"python3", "mine.py"}, 1, cpu);
    EXPECT_EQ(measured.origin, phantora::HostTimeOrigin::Measured);
    EXPECT_TRUE(measured.table.empty());
    EXPECT_NE(measured.Describe({}).find("[cpu] host_time = \"measured\""), std::string::npos)
        << measured.Describe({});
    fs::remove(db);
}

TEST(HostTimeProfile, HostModelNamesTheProfileWhenTheScenarioMeasuredNoGpu)
{
    const fs::path db = TwoPrograms();
    phantora::CpuSpec cpu;
    cpu.localScale = 1.0;
    cpu.hostModel = db;
    const auto p = phantora::HostTimeProfile::Prepare(nullptr, {"./my_cuda_program"}, 8, cpu);
    EXPECT_EQ(p.origin, phantora::HostTimeOrigin::Model);
    EXPECT_NE(p.Describe({}).find("model of 2 recorded programs"), std::string::npos)
        << p.Describe({});
    cpu.hostModel.clear();
    const auto none = phantora::HostTimeProfile::Prepare(nullptr, {"./my_cuda_program"}, 8, cpu);
    EXPECT_EQ(none.origin, phantora::HostTimeOrigin::Measured);
    EXPECT_NE(none.Describe({}).find("[cpu] host_model"), std::string::npos) << none.Describe({});
    fs::remove(db);
}
