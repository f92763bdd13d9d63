// The host-time model: what a program the profile never recorded is charged between its
// GPU calls, learned from every program the profile did record (host_time_model.h), and
// how the bridge chooses between a recording, the model and this machine's clock.
#include "gpu_model/profile/learned_host_model.h"
#include "gpu_model/profile/profile_reader.h"
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/program_name.h"
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
    // as programs, each weighted by its gaps at the key per run (10 each), the median of
    // 100, 200 and 400 is 200.
    HostTimeModel model;
    model.AddProgram(SamplesOf({Thread(10, 100'000, 5'000), Thread(10, 100'000, 5'000),
                                Thread(10, 100'000, 5'000)}),
                     3);
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

TEST(HostTimeModel, WeightedMedianSplitsTheWeightInHalf)
{
    using F = HostTimeModel::Figure;
    EXPECT_EQ(WeightedMedian({}), 0);
    // Equal weights: the plain median, the mean of the middle two for an even count.
    EXPECT_EQ(WeightedMedian({F{100, 1, 1}, F{300, 1, 1}}), 200);
    EXPECT_EQ(WeightedMedian({F{400, 2, 2}, F{100, 2, 2}, F{200, 2, 2}}), 200);
    // A figure holding more than half the weight is the answer, wherever it lies.
    EXPECT_EQ(WeightedMedian({F{100, 1, 1}, F{200, 1, 1}, F{32'000, 5, 5}}), 32'000);
    EXPECT_EQ(WeightedMedian({F{250, 1.5, 3}, F{32'000, 1, 2}}), 250);
}

TEST(HostTimeModel, AProgramThatPassesAContextOftenOutweighsOneThatPassesItOnceAStep)
{
    // One program's inner loop passes a context 20 times a step with 50 us after it; another
    // passes it once a step, at the step's end, with 30 ms of its own Python after it.
    // Counted once each, the model charged their mean, 15 ms, on every one of the first
    // program's passes; weighted by hits per run, what the inner loop's passes cost.
    const std::string fill = "launch:fill_long@libtorch_cuda.so+0x30";
    HostTimeModel weighted;
    HostTimeModel counted({GapStatistic::Median, false, kMinSamples});
    for (HostTimeModel* m : {&weighted, &counted})
    {
        m->AddProgram(SamplesOf({Thread(6 * 20, 50'000, 5'000, fill)}));
        m->AddProgram(SamplesOf({Thread(6, 30'000'000, 5'000, fill)}));
    }
    const auto after = After({"sync:device@x+0x20", fill.c_str()});
    EXPECT_EQ(weighted.Build().Lookup(after)->ns, 50'000);
    EXPECT_EQ(counted.Build().Lookup(after)->ns, 15'025'000);
}

TEST(HostTimeModel, AContextSeenFewerThanMinSamplesTimesLeavesItToShorterContexts)
{
    // One gap after a context no other program ran (a CUDA-graph replay of a whole step
    // behind a stream wait, 28 ms) is one moment, not what those calls cost: the model
    // answers such a context from its last call alone, which many gaps share.
    const std::string wait = "event:wait@libtorch_python.so+0xe453de";
    Sequence s;
    const auto call = [&s](const std::string& label, int64_t gapBefore)
    {
        s.labels.push_back(label);
        s.gapBeforeNs.push_back(gapBefore);
        s.callNs.push_back(-1);
    };
    call("launch:k@libtorch_cuda.so+0x10", -1);
    for (int i = 0; i < 2; ++i)
    {
        call("sync:device@x+0x20", 40'000);
        call("launch:k@libtorch_cuda.so+0x10", 5'000);
    }
    call(wait, 40'000);
    call("sync:device@x+0x20", 28'000'000); // after the wait that follows a launch
    for (int i = 0; i < 4; ++i)             // four waits after a sync: 20 us after each
    {
        call(wait, 5'000);
        call("sync:device@x+0x20", 20'000);
    }
    const Context afterLaunchWait =
        After({"sync:device@x+0x20", "launch:k@libtorch_cuda.so+0x10", "sync:device@x+0x20",
               "launch:k@libtorch_cuda.so+0x10", wait.c_str()});
    HostTimeModel model;
    model.AddProgram(SamplesOf({s}));
    const auto hit = model.Build().Lookup(afterLaunchWait);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->ns, 20'000) << "the one 28 ms gap set a key of its own";
    HostTimeModel everyKey({GapStatistic::Median, true, 1});
    everyKey.AddProgram(SamplesOf({s}));
    EXPECT_EQ(everyKey.Build().Lookup(afterLaunchWait)->ns, 28'000'000);
}

TEST(HostTimeModel, OnlyTheSteadyStepsAreLearned)
{
    // torch.compile's first step spends seconds of CPU between two calls a steady step
    // makes with microseconds between them.
    Sequence s = Thread(6, 100'000, 5'000);
    s.gapBeforeNs[1] = 40'000'000'000; // after the first launch: compiling
    s.gapBeforeNs[3] = 40'000'000'000;
    s.gapBeforeNs[5] = 40'000'000'000;
    EXPECT_EQ(SteadyFrom(s), 6u);
    GapSamples steady;
    steady.Add(s, 1.0, SteadyFrom(s));
    GapSamples all;
    all.Add(s);
    // After a launch: three compiling gaps and three steady ones, the median their middle.
    const auto key = After({"launch:k@libtorch_cuda.so+0x10"});
    EXPECT_EQ(steady.Reduce(GapStatistic::Median).Lookup(key)->ns, 100'000);
    EXPECT_EQ(steady.AllGaps().size(), 5u);
    EXPECT_GT(all.Reduce(GapStatistic::Median).Lookup(key)->ns, 1'000'000'000);
}

TEST(HostTimeModel, ProgramsAreToldApartByTheWordsTheyAreGivenNotTheNumbers)
{
    const auto program = [](const std::string& command)
    {
        phantora::profile::ProfileReader::Run run;
        run.program = phantora::profile::ProgramName(command);
        run.command = command;
        return phantora::profile::ModelProgram(run);
    };
    const std::string llama = program("python3 bench/accuracy/workloads/zoo.py --model llama "
                                      "--size s --dtype bf16 --batch 8 --seq 1024 --steps 10");
    EXPECT_EQ(llama, "workloads/zoo.py --model llama --size s --dtype bf16");
    EXPECT_NE(llama, program("python3 bench/accuracy/workloads/zoo.py --model resnet --size s "
                             "--dtype bf16 --batch 128 --seq 224 --steps 10"));
    EXPECT_EQ(program("python3 examples/torch/train_gpt.py --layers 4 --width 512 --mode single"),
              program("torchrun --standalone --nproc_per_node 4 examples/torch/train_gpt.py "
                      "--layers=2 --width 2048 --mode single"));
    EXPECT_NE(program("python3 examples/torch/train_gpt.py --steps 6"),
              program("python3 examples/megatron/train_gpt.py --steps 6"));
    EXPECT_NE(program("python3 zoo.py --model llama --compile default"),
              program("python3 zoo.py --model llama"));
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

TEST(LearnedHostModel, LearnsEachThreadsSteadyStepsOnly)
{
    // A compiled program's first steps: 40 s of compiling after each launch; its steady
    // steps 100 us.  The model learned from the profile charges the steady figure.
    const fs::path db = fs::temp_directory_path() /
                        ("phantora_learned_steady_" + std::to_string(::getpid()) + ".sqlite");
    fs::remove(db);
    {
        phantora::profile::ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        Sequence s = Thread(6, 100'000, 5'000);
        s.gapBeforeNs[1] = s.gapBeforeNs[3] = s.gapBeforeNs[5] = 40'000'000'000;
        w.AddRun("c.tsv", "c.py", "python3 c.py --compile default");
        w.SetHostGaps("c.tsv", {{"1.1", s}});
        w.Commit();
    }
    const phantora::profile::ProfileReader reader(db);
    const auto key = After({"launch:k@libtorch_cuda.so+0x10"});
    phantora::profile::LearnOptions options;
    const auto steady = phantora::profile::LearnHostModel(reader, options, 0);
    EXPECT_EQ(steady.programs, 1u);
    EXPECT_EQ(steady.table.Lookup(key)->ns, 100'000);
    options.steadyOnly = false;
    EXPECT_GT(phantora::profile::LearnHostModel(reader, options, 0).table.Lookup(key)->ns,
              1'000'000'000);
    fs::remove(db);
}

TEST(HostTimeModel, AKeyFewerProgramsRanThanMinProgramsLeavesItToShorterContexts)
{
    // Program a alone runs kernel x before its sync, 1 ms after it; both run k, 100 us after.
    // With two programs needed a key, x's contexts go and the launch kind answers.
    HostTimeModel one;
    HostTimeModel two({GapStatistic::Median, true, kMinSamples, 2});
    for (HostTimeModel* model : {&one, &two})
    {
        model->AddProgram(SamplesOf({Thread(8, 1'000'000, 5'000, "launch:x@libtorch_cuda.so+0x30"),
                                     Thread(8, 100'000, 5'000)}));
        model->AddProgram(SamplesOf({Thread(8, 100'000, 5'000)}));
    }
    const auto afterX = After({"sync:device@x+0x20", "launch:x@libtorch_cuda.so+0x30"});
    EXPECT_EQ(one.Build().Lookup(afterX)->ns, 1'000'000);
    const auto hit = two.Build().Lookup(afterX);
    EXPECT_EQ(hit->source, Source::Kind);
    EXPECT_NE(hit->ns, 1'000'000);
}

TEST(GapSamples, ContextsLongerThanMaxDepthAreNotGathered)
{
    // After k, 100 us when a sync came before it and 300 us when j did: two calls tell the
    // gaps apart, k alone gives the median of both.
    Sequence s;
    int64_t before = -1;
    for (int i = 0; i < 8; ++i)
    {
        for (const auto& [label, after] : {std::pair{"sync:device@x+0x20", 5'000},
                                           std::pair{"launch:k@libtorch_cuda.so+0x10", 100'000},
                                           std::pair{"launch:j@libtorch_cuda.so+0x40", 5'000},
                                           std::pair{"launch:k@libtorch_cuda.so+0x10", 300'000}})
        {
            s.labels.emplace_back(label);
            s.gapBeforeNs.push_back(before);
            s.callNs.push_back(-1);
            before = after;
        }
    }
    s.labels.emplace_back("sync:device@x+0x20"); // the last k's gap ends here
    s.gapBeforeNs.push_back(before);
    s.callNs.push_back(-1);
    GapSamples deep;
    deep.Add(s);
    GapSamples shallow(GapSamples::Keys::All, 1);
    shallow.Add(s);
    const auto afterSyncK = After({"sync:device@x+0x20", "launch:k@libtorch_cuda.so+0x10"});
    EXPECT_EQ(deep.Reduce(GapStatistic::Median).Lookup(afterSyncK)->ns, 100'000);
    EXPECT_EQ(shallow.Reduce(GapStatistic::Median).Lookup(afterSyncK)->ns, 200'000);
}

TEST(LearnedHostModel, LeavesOutAProgramByNameOrOneCodePathOfIt)
{
    // One script run with two models: left out by its name both go (nothing to learn from);
    // left out by code path, the other model's figure stays.
    const fs::path db = fs::temp_directory_path() /
                        ("phantora_learned_code_path_" + std::to_string(::getpid()) + ".sqlite");
    fs::remove(db);
    {
        phantora::profile::ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddRun("a.tsv", "z.py", "python3 z.py --model a --batch 8");
        w.SetHostGaps("a.tsv", {{"1.1", Thread(6, 100'000, 5'000)}});
        w.AddRun("b.tsv", "z.py", "python3 z.py --model b --batch 8");
        w.SetHostGaps("b.tsv", {{"1.1", Thread(6, 300'000, 5'000)}});
        w.Commit();
    }
    const phantora::profile::ProfileReader reader(db);
    phantora::profile::LearnOptions options;
    EXPECT_TRUE(phantora::profile::LearnHostModel(reader, options, 0, {"z.py"}).table.Empty());
    options.leaveOutCodePaths = true;
    const auto withoutA = phantora::profile::LearnHostModel(reader, options, 0, {"z.py --model a"});
    EXPECT_EQ(withoutA.programs, 1u);
    EXPECT_EQ(withoutA.table.Lookup(After({"launch:k@libtorch_cuda.so+0x10"}))->ns, 300'000);
    fs::remove(db);
}
