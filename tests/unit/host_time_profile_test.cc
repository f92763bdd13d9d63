// Which recordings of a program make the host-time table of a simulated command.
#include "gpu_model/profile/profile_reader.h"
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/raw_log.h"
#include "host_time/readback_table.h"
#include "host_time_profile.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace
{

namespace fs = std::filesystem;

/// A profile with one host-time recording per command (one gap each).
fs::path ProfileOf(const std::vector<std::pair<std::string, std::string>>& runs)
{
    const fs::path db = fs::temp_directory_path() /
                        ("phantora_host_time_profile_" + std::to_string(::getpid()) + ".sqlite");
    fs::remove(db);
    phantora::profile::ProfileWriter w(db);
    w.SetMetadata("gpu_model", "H200");
    for (const auto& [run, command] : runs)
    {
        w.AddRun(run, "train_gpt.py", command);
        phantora::host_time::Sequence s;
        s.labels = {"sync:device@x+0x1", "sync:device@x+0x1"};
        s.gapBeforeNs = {-1, 1000};
        w.SetHostGaps(run, {{"1.1", s}});
    }
    w.Commit();
    return db;
}

std::vector<std::string> Split(const std::string& s)
{
    std::vector<std::string> words;
    std::string w;
    for (char c : s)
    {
        if (c == ' ')
        {
            words.push_back(w);
            w.clear();
        }
        else
        {
            w += c;
        }
    }
    words.push_back(w);
    return words;
}

TEST(HostTimeProfile, TheRecordingOfTheSameModeWinsOverOneWithOtherOptionsAndStepCounts)
{
    const fs::path db = ProfileOf({
        {"cudnn.tsv", "python3 train_gpt.py --attention auto --layers 4 --width 512 --steps 12 "
                      "--warmup 4"},
        {"fsdp.tsv", "torchrun --nproc_per_node 1 train_gpt.py --layers 4 --width 512 --mode "
                     "fsdp --steps 6"},
        {"single.tsv", "python3 train_gpt.py --layers 4 --width 512 --mode single --steps 6"},
    });
    const phantora::profile::ProfileReader reader(db);
    phantora::CpuSpec cpu;
    cpu.localScale = 1.0; // no host-speed benchmark in a unit test
    // The step counts of the cuDNN recording equal the command's, but it ran another
    // attention: the FSDP recording, whose mode and sizes match, wins.
    const auto p = phantora::HostTimeProfile::Prepare(
        &reader,
        Split("python3 train_gpt.py --layers 4 --width 512 --mode fsdp --steps 12 --warmup 4"), 1,
        cpu);
    ASSERT_EQ(p.runs, std::vector<std::string>{"fsdp.tsv"});
    EXPECT_TRUE(p.sameArguments) << "iteration counts aside, it gave every argument";
    const auto q = phantora::HostTimeProfile::Prepare(
        &reader, Split("python3 train_gpt.py --attention auto --layers 4 --width 512 --steps 3"), 1,
        cpu);
    ASSERT_EQ(q.runs, std::vector<std::string>{"cudnn.tsv"});
    fs::remove(db);
}

// The same script and arguments recorded at world sizes 1, 2 and 8: a simulation takes
// the recording whose world size is nearest its own (by ratio), since N ranks run code
// between their calls that one rank never reaches (FSDP's all-gathers).
TEST(HostTimeProfile, TheRecordingAtTheNearestWorldSizeWins)
{
    const std::string args = " train_gpt.py --mode fsdp --steps 6";
    const fs::path db = ProfileOf({
        {"one.tsv", "torchrun --nproc_per_node 1" + args},
        {"two.tsv", "torchrun --standalone --nproc_per_node 2" + args},
        {"eight.tsv", "torchrun --nproc_per_node=8" + args},
    });
    const phantora::profile::ProfileReader reader(db);
    phantora::CpuSpec cpu;
    cpu.localScale = 1.0;
    const auto command = Split("python3" + args);
    const auto pick = [&](int ranks)
    {
        const auto p = phantora::HostTimeProfile::Prepare(&reader, command, ranks, cpu);
        EXPECT_EQ(p.runs.size(), 1u) << ranks;
        return std::make_pair(p.runs.empty() ? "" : p.runs.front(), p.recordedRanks);
    };
    EXPECT_EQ(pick(1), std::make_pair(std::string("one.tsv"), 1));
    EXPECT_EQ(pick(2), std::make_pair(std::string("two.tsv"), 2));
    EXPECT_EQ(pick(3), std::make_pair(std::string("two.tsv"), 2)) << "3/2 is nearer than 8/3";
    EXPECT_EQ(pick(4), std::make_pair(std::string("eight.tsv"), 8)) << "a tie: the larger";
    EXPECT_EQ(pick(64), std::make_pair(std::string("eight.tsv"), 8));
    fs::remove(db);
}

// A recording made from the repository root names its config by a relative path; the
// simulation may name the same file by its absolute path, or from the config's own
// directory.  The path's words differ, the file does not: the recording of that config
// must still win, over the one of a config beside it.
TEST(HostTimeProfile, APathArgumentMatchesTheSameFileNamedFromAnotherDirectory)
{
    const std::string launch = "torchrun --standalone --nproc_per_node 1 train_gpt.py ";
    const fs::path db = ProfileOf({
        {"zero1.tsv", launch + "--deepspeed_config examples/deepspeed/zero1.json --steps 12"},
        {"zero2.tsv", launch + "--deepspeed_config examples/deepspeed/zero2.json --steps 12"},
    });
    const phantora::profile::ProfileReader reader(db);
    phantora::CpuSpec cpu;
    cpu.localScale = 1.0;
    const auto pick = [&](const std::string& config)
    {
        return phantora::HostTimeProfile::Prepare(
            &reader, Split("python3 train_gpt.py --deepspeed_config " + config + " --steps 4"), 1,
            cpu);
    };
    for (const std::string config :
         {"examples/deepspeed/zero2.json", "/work/repo/examples/deepspeed/zero2.json",
          "./examples//deepspeed/zero2.json", "zero2.json", "../deepspeed/zero2.json"})
    {
        const auto p = pick(config);
        EXPECT_EQ(p.runs, std::vector<std::string>{"zero2.tsv"}) << config;
        EXPECT_TRUE(p.sameArguments) << config;
    }
    const auto flagged = phantora::HostTimeProfile::Prepare(
        &reader,
        Split("python3 train_gpt.py --deepspeed_config=/abs/examples/deepspeed/zero1.json"), 1,
        cpu);
    EXPECT_EQ(flagged.runs, std::vector<std::string>{"zero1.tsv"}) << "--flag=path";
    // Another directory's file of the same name is not the same file: neither recording
    // was given it, so both are as like the command (and neither gave every argument).
    const auto other = pick("configs/zero2.json");
    EXPECT_EQ(other.runs.size(), 2u);
    EXPECT_FALSE(other.sameArguments);
    fs::remove(db);
}

// The summary's host-time line, with what a one-GPU DeepSpeed ZeRO-1 run was charged
// (12,389 gaps by full context, 1,836 by module context, and one 1.38 s start-up gap
// measured here: DeepSpeed's set-up between its parameter broadcasts and its first
// step).  In shares of time the start-up gap is 88 % and the line read as if the steps'
// contexts were not in the recording; in shares of gaps all but one came from it.
TEST(HostTimeProfile, TheSummaryCountsGapsSoOneStartUpGapDoesNotHideTheRecordedSteps)
{
    phantora::HostTimeProfile p;
    p.origin = phantora::HostTimeOrigin::Recording;
    p.table = "x"; // a recording was found (its contents do not matter to the line)
    p.runs = {"deepspeed_zero1.tsv"};
    p.sameArguments = true;
    p.gaps = 14230;
    p.localScale = 1.26;
    p.localScaleSource = "scenario";
    phantora::HostTimeProfile::Charged c;
    using phantora::host_time::Source;
    c.gaps[static_cast<std::size_t>(Source::Context)] = 12389;
    c.ns[static_cast<std::size_t>(Source::Context)] = 162'834'000;
    c.gaps[static_cast<std::size_t>(Source::ModuleContext)] = 1836;
    c.ns[static_cast<std::size_t>(Source::ModuleContext)] = 21'955'000;
    c.gaps[static_cast<std::size_t>(Source::Measured)] = 1;
    c.ns[static_cast<std::size_t>(Source::Measured)] = 1'379'652'000;
    const std::string line = p.Describe(c);
    EXPECT_NE(line.find("recorded (1 run with the same arguments, at world size 1, 14230 gaps)"),
              std::string::npos)
        << line;
    EXPECT_NE(line.find("14225 of 14226 gaps charged from it (87.1% context, 12.9% context "
                        "(module))"),
              std::string::npos)
        << line;
    EXPECT_NE(line.find("1 gap measured here, 1379.7 ms (88.2% of the host time charged)"),
              std::string::npos)
        << line;
    EXPECT_NE(line.find("x 1.260 ([cpu] local_scale)"), std::string::npos) << line;

    c.gaps[static_cast<std::size_t>(Source::Measured)] = 0;
    c.ns[static_cast<std::size_t>(Source::Measured)] = 0;
    EXPECT_EQ(p.Describe(c).find("measured here"), std::string::npos) << p.Describe(c);

    p.origin = phantora::HostTimeOrigin::Model;
    p.modelPrograms = 3;
    p.modelRuns = 34;
    p.modelFile = "H200.sqlite";
    p.keys = 1234;
    EXPECT_NE(p.Describe(c).find("host time: model of 3 recorded programs (34 runs, 14230 gaps in "
                                 "H200.sqlite; none of this program), 1234 keys; 14225 of 14225 "
                                 "gaps charged from it"),
              std::string::npos)
        << p.Describe(c);

    p.origin = phantora::HostTimeOrigin::Measured;
    p.table.clear();
    EXPECT_NE(p.Describe(c).find("measured on this machine (no profile holds a recording"),
              std::string::npos)
        << p.Describe(c);
}

} // namespace

TEST(HostTimeProfile, RecordedReadBacksTravelFromTheRawLogToTheTableTheRanksGet)
{
    // A recorder's lines: a norm (float32 2.5, then 3.0) and a count (int32 7) read back.
    const fs::path raw = fs::temp_directory_path() /
                         ("phantora_readback_raw_" + std::to_string(::getpid()) + ".tsv");
    {
        std::ofstream out(raw);
        out << "meta\tcommand\tpython3 train_gpt.py --steps 2\n";
        for (int step = 0; step < 4; ++step) // the first two read nothing
        {
            out << "gap\t1.1\t10\tlaunch:norm@x+0x1\t5\n"
                << "gap\t1.1\t10\tcopy:async@x+0x2\t5\n"
                << "gap\t1.1\t10\tsync:stream@x+0x3\t-1\n"
                << "gap\t1.1\t10\tcopy:async@x+0x4\t5\n";
        }
        out << "readback\t1.1\t9\t00002040\n"  // 2.5f
            << "readback\t1.1\t13\t00004040\n" // 3.0f
            << "readback\t1.1\t11\t07000000\n" // 7
            << "readback\t1.1\t15\t07000000\n";
    }
    const auto log = phantora::profile::RawLog::Read(raw);
    ASSERT_EQ(log.hostThreads.at("1.1").reads.size(), 4u);
    EXPECT_EQ(log.hostThreads.at("1.1").reads.at(9), std::string("\0\0\x20\x40", 4));
    const fs::path db = fs::temp_directory_path() /
                        ("phantora_readback_" + std::to_string(::getpid()) + ".sqlite");
    fs::remove(db);
    {
        phantora::profile::ProfileWriter w(db);
        w.SetMetadata("gpu_model", "H200");
        w.AddRun("rb.tsv", "train_gpt.py", "python3 train_gpt.py --steps 2");
        w.SetHostGaps("rb.tsv", log.hostThreads);
        w.Commit();
    }
    const phantora::profile::ProfileReader reader(db);
    const auto sequences = reader.HostSequences({"rb.tsv"});
    ASSERT_EQ(sequences.size(), 1u);
    EXPECT_EQ(sequences[0].reads, log.hostThreads.at("1.1").reads);
    phantora::CpuSpec cpu;
    cpu.localScale = 1.0;
    const auto command = Split("python3 train_gpt.py --steps 2");
    using phantora::host_time::ReadbackMode;
    const auto floats = phantora::HostTimeProfile::Prepare(&reader, command, 1, cpu);
    const auto all =
        phantora::HostTimeProfile::Prepare(&reader, command, 1, cpu, ReadbackMode::All);
    const auto zeros =
        phantora::HostTimeProfile::Prepare(&reader, command, 1, cpu, ReadbackMode::Zeros);
    EXPECT_EQ(floats.recordedReads, 4u);
    EXPECT_GT(floats.readbackKeys, 0u);
    EXPECT_GT(all.readbackKeys, floats.readbackKeys) << "the count is served by \"all\" only";
    EXPECT_EQ(zeros.readbackKeys, 0u);
    EXPECT_TRUE(zeros.readbacks.empty());
    // What a rank is sent serves the norm's read: the lower median of 2.5 and 3.0.
    const auto table = phantora::host_time::ReadbackTable::Parse(floats.readbacks);
    phantora::host_time::Context c;
    for (const char* l : {"launch:norm@x+0x1", "copy:async@x+0x2"})
    {
        c.Push(phantora::host_time::HostLabel::FromText(l));
    }
    const auto* norm = table.Lookup(c, 4);
    ASSERT_NE(norm, nullptr);
    EXPECT_EQ(norm->bytes, std::string("\0\0\x20\x40", 4));
    fs::remove(db);
    fs::remove(raw);
}
