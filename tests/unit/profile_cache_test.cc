// The profile cache: what a writer stores a reader finds, bad files are refused with
// a message naming them, and many readers may open one profile while it is extended.
#include "gpu_model/profile/op_stats.h"
#include "gpu_model/profile/profile_reader.h"
#include "gpu_model/profile/profile_schema.h"
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/program_name.h"
#include "gpu_model/profile/sqlite_handle.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <gtest/gtest.h>
#include <random>
#include <thread>
#include <unistd.h>

using namespace phantora::profile;
namespace fs = std::filesystem;

namespace
{

fs::path Scratch(const std::string& name)
{
    const fs::path dir =
        fs::temp_directory_path() / ("phantora-profile-test-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const fs::path p = dir / name;
    fs::remove(p);
    return p;
}

OpKey Kernel(const std::string& name, uint32_t grid, uint32_t block)
{
    OpKey k;
    k.kind = OpKind::Kernel;
    k.name = name;
    k.grid = {grid, 1, 1};
    k.block = {block, 1, 1};
    return k;
}

void ExpectThrowsMentioning(const std::function<void()>& f, const std::vector<std::string>& words)
{
    try
    {
        f();
        FAIL() << "no error";
    }
    catch (const ProfileError& e)
    {
        for (const auto& w : words)
        {
            EXPECT_NE(std::string(e.what()).find(w), std::string::npos)
                << "'" << w << "' not in: " << e.what();
        }
    }
}

} // namespace

TEST(OpStats, OrderStatisticsOfShuffledSamples)
{
    std::vector<int64_t> v;
    for (int64_t i = 1; i <= 101; ++i)
    {
        v.push_back(i * 10);
    }
    std::shuffle(v.begin(), v.end(), std::mt19937(7));
    const OpStats s = OpStats::FromSamples(v, "record");
    EXPECT_EQ(s.samples, 101);
    EXPECT_DOUBLE_EQ(s.medianNs, 510.0);
    EXPECT_DOUBLE_EQ(s.p10Ns, 110.0);
    EXPECT_DOUBLE_EQ(s.p90Ns, 910.0);
    EXPECT_DOUBLE_EQ(s.meanNs, 510.0);
    EXPECT_GT(s.stddevNs, 0.0);
}

TEST(ProfileCache, WrittenOpsAreFoundByTheirExactKeyOnly)
{
    const fs::path db = Scratch("a.sqlite");
    {
        ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddSamples(Kernel("k(float*)", 1024, 256), {100, 300, 200}, "run1", "record");
        w.Commit();
        // a second run of the same op merges with the first
        w.AddSamples(Kernel("k(float*)", 1024, 256), {400, 500}, "run2", "record");
        w.Commit();
    }
    ProfileReader r(db);
    EXPECT_EQ(r.GpuModel(), "H200");
    const OpStats* s = r.Find(Kernel("k(float*)", 1024, 256));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->samples, 5);
    EXPECT_DOUBLE_EQ(s->medianNs, 300.0);
    EXPECT_EQ(r.Find(Kernel("k(float*)", 2048, 256)), nullptr);
    OpKey smem = Kernel("k(float*)", 1024, 256);
    smem.sharedMem = 128;
    EXPECT_EQ(r.Find(smem), nullptr);
    EXPECT_EQ(r.SameName(OpKind::Kernel, "k(float*)").size(), 1u);
}

// phantora-cluster --profile mine.sqlite: the user's recording first, the committed
// profile after it. An op both measured is the first file's; the rest come from either.
TEST(ProfileCache, SeveralFilesAreSearchedInOrder)
{
    const fs::path mine = Scratch("mine.sqlite");
    const fs::path committed = Scratch("committed.sqlite");
    {
        ProfileWriter w(mine); // created: it did not exist
        w.SetMetadata("gpu_model", "H200");
        w.AddRun("mine.tsv", "train.py", "python train.py");
        w.AddSamples(Kernel("shared", 8, 128), {1000, 1000, 1000}, "mine.tsv", "record");
        w.AddSamples(Kernel("only_mine", 8, 128), {50}, "mine.tsv", "record");
        w.Commit();
    }
    {
        ProfileWriter w(committed);
        w.SetMetadata("gpu_model", "H200");
        w.AddRun("old.tsv", "train.py", "python train.py --old");
        w.AddSamples(Kernel("shared", 8, 128), {10, 10}, "old.tsv", "record");
        w.AddSamples(Kernel("only_committed", 8, 128), {70}, "old.tsv", "record");
        w.Commit();
    }
    const ProfileReader r(std::vector<fs::path>{mine, committed});
    ASSERT_NE(r.Find(Kernel("shared", 8, 128)), nullptr);
    EXPECT_DOUBLE_EQ(r.Find(Kernel("shared", 8, 128))->medianNs, 1000.0);
    EXPECT_EQ(r.Find(Kernel("shared", 8, 128))->samples, 3);
    // the committed file's samples of the same program do not leak into mine's op
    EXPECT_DOUBLE_EQ(r.Find(Kernel("shared", 8, 128))->medianByProgramNs.at("train.py"), 1000.0);
    ASSERT_NE(r.Find(Kernel("only_mine", 8, 128)), nullptr);
    ASSERT_NE(r.Find(Kernel("only_committed", 8, 128)), nullptr);
    EXPECT_DOUBLE_EQ(r.Find(Kernel("only_committed", 8, 128))->medianNs, 70.0);
    EXPECT_EQ(r.Runs().size(), 2u);
    EXPECT_EQ(r.Files(), (std::vector<fs::path>{mine, committed}));
    // The other order: the committed one wins.
    const ProfileReader back(std::vector<fs::path>{committed, mine});
    EXPECT_DOUBLE_EQ(back.Find(Kernel("shared", 8, 128))->medianNs, 10.0);

    const fs::path other = Scratch("h100.sqlite");
    {
        ProfileWriter w(other);
        w.SetMetadata("gpu_model", "H100");
        w.Commit();
    }
    ExpectThrowsMentioning([&] { ProfileReader(std::vector<fs::path>{mine, other}); },
                           {other.string(), "H100", "H200", "one GPU model"});
}

TEST(ProgramName, IsTheScriptOrModuleOfAnInterpreterElseTheExecutable)
{
    EXPECT_EQ(ProgramName(std::vector<std::string>{"python3", "-u", "examples/torch/train_gpt.py",
                                                   "--steps", "6"}),
              "train_gpt.py");
    EXPECT_EQ(ProgramName("/opt/venv/bin/python3.12 -X dev /x/y/torch_gpt_probe.py --hidden 768"),
              "torch_gpt_probe.py");
    EXPECT_EQ(ProgramName("python -m torch.distributed.run --nproc 1 t.py"), "t.py");
    EXPECT_EQ(ProgramName("torchrun --standalone --nproc_per_node 1 examples/torch/train_gpt.py "
                          "--mode ddp"),
              "train_gpt.py");
    EXPECT_EQ(ProgramName("mpirun -np 2 python3 -u bench.py"), "bench.py");
    EXPECT_EQ(ProgramName("torchrun --help"), "torchrun");
    EXPECT_EQ(ProgramName("python -m mymod --x 1"), "mymod");
    // A module run by a launcher is the module, as when the simulator runs it itself.
    EXPECT_EQ(ProgramName("torchrun --standalone --nproc_per_node 1 -m torchtitan.train "
                          "--job.config_file a.toml"),
              "torchtitan.train");
    EXPECT_EQ(ProgramName("torchrun --module pkg.main x.py"), "pkg.main");
    EXPECT_EQ(ProgramArguments("torchrun --nproc_per_node 1 -m torchtitan.train --steps 3"),
              "--steps 3");
    EXPECT_EQ(ProgramArguments("python -m torchtitan.train --steps 3"), "--steps 3");
    EXPECT_EQ(ProgramName("/work/build/examples/cuda/phantora-cuda-train-step 16777216 20"),
              "phantora-cuda-train-step");
    EXPECT_EQ(ProgramName("python3 -c print(1)"), "python3");
    EXPECT_EQ(ProgramName(std::vector<std::string>{}), "");
}

TEST(ProgramName, LaunchedRanksCountsTheLaunchersProcessesNotTheProgramsFlags)
{
    EXPECT_EQ(LaunchedRanks("python3 gpt.py --nproc_per_node 8"), 1);
    EXPECT_EQ(LaunchedRanks("torchrun --standalone --nproc_per_node 2 gpt.py --mode fsdp"), 2);
    EXPECT_EQ(LaunchedRanks("torchrun --nproc-per-node=4 --nnodes 2 -m torchtitan.train"), 8);
    EXPECT_EQ(LaunchedRanks("torchrun --nnodes 1:2 --nproc_per_node 4 t.py -n 16"), 4);
    EXPECT_EQ(LaunchedRanks("python -m torch.distributed.run --nproc 3 t.py"), 3);
    EXPECT_EQ(LaunchedRanks("mpirun -np 4 python3 -u bench.py"), 4);
    EXPECT_EQ(LaunchedRanks("deepspeed --num_gpus 2 train.py --deepspeed_config z.json"), 2);
    EXPECT_EQ(LaunchedRanks("torchrun --nproc_per_node gpu t.py"), 1);
}

// One kernel at one launch shape measured in two programs, where its cost depends on an
// argument the key does not hold (a softmax's row length): each program's own samples
// give its median, and a program the profile never ran gets the pooled median.
TEST(ProfileCache, EachRecordedProgramKeepsItsOwnMedian)
{
    const fs::path db = Scratch("programs.sqlite");
    const OpKey softmax = Kernel("softmax(float*, int)", 8192, 1024);
    {
        ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddSamples(softmax, {1000, 1010, 990}, "train.tsv", "record");
        w.AddSamples(softmax, {1600, 1590, 1610, 1620, 1580}, "probe.tsv", "record");
        w.AddSamples(softmax, {5000}, "unnamed.tsv", "record");
        w.AddRun("train.tsv", "train_gpt.py", "python3 train_gpt.py");
        w.AddRun("probe.tsv", "probe.py", "python3 probe.py");
        w.Commit();
    }
    ProfileReader r(db);
    const OpStats* s = r.Find(softmax);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->samples, 9);
    EXPECT_DOUBLE_EQ(s->medianNs, 1590.0);
    EXPECT_DOUBLE_EQ(s->MedianFor("train_gpt.py"), 1000.0);
    EXPECT_DOUBLE_EQ(s->MedianFor("probe.py"), 1600.0);
    EXPECT_DOUBLE_EQ(s->MedianFor("other.py"), 1590.0);
    EXPECT_DOUBLE_EQ(s->MedianFor(""), 1590.0);
    EXPECT_EQ(r.RunPrograms().at("probe.tsv"), "probe.py");
    EXPECT_EQ(r.RunPrograms().count("unnamed.tsv"), 0u);
}

// A kernel whose cost depends on a scalar argument, recorded with its launches' argument
// facts: each set of facts keeps its own median beside the pooled one.
TEST(ProfileCache, EachSetOfLaunchArgumentsKeepsItsOwnMedian)
{
    const fs::path db = Scratch("args.sqlite");
    const OpKey softmax = Kernel("softmax(float*, int)", 8192, 1024);
    {
        ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddSamples(softmax, {1000, 1010, 990, 1600, 1590}, "a.tsv", "record",
                     {"1=32000", "1=32000", "1=32000", "1=50304", "1=50304"});
        w.AddSamples(softmax, {1610, 5000}, "b.tsv", "record", {"1=50304", ""});
        w.Commit();
    }
    ProfileReader r(db);
    const OpStats* s = r.Find(softmax);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->samples, 7);
    EXPECT_DOUBLE_EQ(s->medianNs, 1590.0);
    ASSERT_EQ(s->medianByArgsNs.size(), 2u); // samples without facts make no entry
    EXPECT_DOUBLE_EQ(*s->ArgsMedian("1=32000"), 1000.0);
    EXPECT_DOUBLE_EQ(*s->ArgsMedian("1=50304"), 1600.0);
    EXPECT_EQ(s->ArgsMedian("1=4096"), nullptr);
    EXPECT_EQ(s->ArgsMedian(""), nullptr);
}

// A profile written before samples had launch arguments reads with pooled medians, and
// a writer extending it adds the column rather than failing.
TEST(ProfileCache, AProfileWithoutLaunchArgumentsReadsAndIsExtended)
{
    const fs::path db = Scratch("no-args.sqlite");
    const OpKey k = Kernel("k(float*, int)", 64, 64);
    {
        ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddSamples(k, {100, 200, 300}, "r.tsv", "record");
        w.Commit();
    }
    {
        SqliteDb raw(db, false);
        raw.Exec("ALTER TABLE samples DROP COLUMN args");
    }
    {
        ProfileReader old(db);
        ASSERT_NE(old.Find(k), nullptr);
        EXPECT_TRUE(old.Find(k)->medianByArgsNs.empty());
        EXPECT_DOUBLE_EQ(old.Find(k)->medianNs, 200.0);
    }
    {
        ProfileWriter w(db);
        w.AddSamples(k, {900, 1000}, "s.tsv", "record", {"1=7", "1=7"});
        w.Commit();
    }
    ProfileReader r(db);
    EXPECT_EQ(r.Find(k)->samples, 5);
    EXPECT_DOUBLE_EQ(*r.Find(k)->ArgsMedian("1=7"), 950.0);
}

// A profile written before cuDNN ops existed refuses kind 'cudnn' in its ops table's
// CHECK: a writer rebuilds the table, keeping every op, id and sample.
TEST(ProfileCache, AProfileFromBeforeCudnnOpsIsRebuiltToHoldThem)
{
    const fs::path db = Scratch("no-cudnn.sqlite");
    const OpKey k = Kernel("k(float*, int)", 64, 64);
    {
        ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddSamples(k, {100, 200, 300}, "r.tsv", "record");
        w.Commit();
    }
    {
        SqliteDb raw(db, false);
        std::string old(kOpsColumnsSql);
        old.replace(old.find(",'cudnn'"), 8, "");
        raw.Exec("CREATE TABLE ops_old" + old);
        raw.Exec("INSERT INTO ops_old SELECT * FROM ops");
        raw.Exec("DROP TABLE ops");
        raw.Exec("ALTER TABLE ops_old RENAME TO ops");
        raw.Exec("PRAGMA ignore_check_constraints = OFF");
        EXPECT_THROW(raw.Exec("INSERT INTO ops(kind, name, samples, median_ns, p10_ns, p90_ns, "
                              "mean_ns, stddev_ns, source) VALUES('cudnn', 'x', 1, 1, 1, 1, 1, 0, "
                              "'record')"),
                     ProfileError);
    }
    OpKey sdpa;
    sdpa.kind = OpKind::Cudnn;
    sdpa.name = "cudnnSdpaFprop(b=1,h=1,h_kv=1,s_q=1,s_kv=1,d_qk=1,d_v=1,type=bf16)";
    {
        ProfileWriter w(db);
        w.AddSamples(sdpa, {5000, 7000}, "s.tsv", "record");
        w.AddSamples(k, {400}, "s.tsv", "record");
        w.Commit();
    }
    ProfileReader r(db);
    ASSERT_NE(r.Find(sdpa), nullptr);
    EXPECT_DOUBLE_EQ(r.Find(sdpa)->medianNs, 6000.0);
    ASSERT_NE(r.Find(k), nullptr);
    EXPECT_EQ(r.Find(k)->samples, 4);
    EXPECT_DOUBLE_EQ(r.Find(k)->medianNs, 250.0);
}

// Profiles written before the runs table existed read as before: pooled medians only.
TEST(ProfileCache, AProfileWithoutARunsTableHasPooledMediansOnly)
{
    const fs::path db = Scratch("no-runs.sqlite");
    {
        ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddSamples(Kernel("k(float*)", 64, 64), {100, 200, 300}, "r.tsv", "record");
        w.AddRun("r.tsv", "p.py", "python p.py");
        w.Commit();
    }
    {
        SqliteDb raw(db, false);
        raw.Exec("DROP TABLE runs");
    }
    ProfileReader r(db);
    const OpStats* s = r.Find(Kernel("k(float*)", 64, 64));
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->medianByProgramNs.empty());
    EXPECT_DOUBLE_EQ(s->MedianFor("p.py"), 200.0);
    EXPECT_TRUE(r.RunPrograms().empty());
}

TEST(ProfileCache, RefusesMeasurementsOfAnotherGpu)
{
    const fs::path db = Scratch("b.sqlite");
    {
        ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H100");
        w.Commit();
    }
    ProfileWriter w(db);
    ExpectThrowsMentioning([&] { w.SetMetadata("gpu_model", "H200"); },
                           {db.string(), "H100", "H200"});
}

TEST(ProfileCache, BadFilesAreRefusedNamingTheFileAndWhatWasExpected)
{
    ExpectThrowsMentioning([] { ProfileReader r(Scratch("none.sqlite")); },
                           {"none.sqlite", "no such file"});
    const fs::path db = Scratch("old.sqlite");
    {
        ProfileWriter w(db);
        w.SetMetadata("schema_version", "0");
        w.Commit();
    }
    ExpectThrowsMentioning([&] { ProfileReader r(db); },
                           {db.string(), "schema_version", std::to_string(kSchemaVersion)});
    const fs::path bad = Scratch("badkind.sqlite");
    {
        ProfileWriter w(bad);
        w.Commit();
    }
    {
        SqliteDb raw(bad, false);
        raw.Exec("PRAGMA ignore_check_constraints = ON");
        raw.Exec("INSERT INTO ops(kind, name, samples, median_ns, p10_ns, p90_ns, mean_ns, "
                 "stddev_ns, source) VALUES('warp', 'x', 1, 1, 1, 1, 1, 0, 'record')");
    }
    ExpectThrowsMentioning([&] { ProfileReader r(bad); }, {bad.string(), "warp", "expected"});
}

// Ranks of several simulations open one profile while gpu_profiler merges more
// measurements into it: every open succeeds and sees a committed state.
TEST(ProfileCache, ManyReadersWhileAWriterCommits)
{
    const fs::path db = Scratch("shared.sqlite");
    {
        ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddSamples(Kernel("k0", 1, 1), {10}, "seed", "record");
        w.Commit();
    }
    std::atomic<bool> writing{true};
    std::atomic<int> opens{0}, failures{0};
    std::thread writer(
        [&]
        {
            ProfileWriter w(db);
            for (uint32_t i = 1; i <= 200; ++i)
            {
                w.AddSamples(Kernel("k" + std::to_string(i), i, 1), {int64_t(i)}, "w", "record");
                w.Commit();
            }
            writing = false;
        });
    std::vector<std::thread> readers;
    for (int t = 0; t < 8; ++t)
    {
        readers.emplace_back(
            [&]
            {
                do
                {
                    try
                    {
                        ProfileReader r(db);
                        // commits add one op each: a reader sees a prefix, never a torn state
                        const std::size_t n = r.Ops().size();
                        for (uint32_t i = 0; i < n; ++i)
                        {
                            if (!r.Find(Kernel("k" + std::to_string(i), std::max(i, 1u), 1)))
                            {
                                ++failures;
                            }
                        }
                        ++opens;
                    }
                    catch (const std::exception&)
                    {
                        ++failures;
                    }
                } while (writing);
            });
    }
    writer.join();
    for (auto& r : readers)
    {
        r.join();
    }
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GE(opens.load(), 8);
    EXPECT_EQ(ProfileReader(db).Ops().size(), 201u);
}
