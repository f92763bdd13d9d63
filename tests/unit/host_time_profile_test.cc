// Which recordings of a program make the host-time table of a simulated command.
#include "host_time_profile.h"
#include "profile_reader.h"
#include "profile_writer.h"

#include <filesystem>
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

} // namespace
