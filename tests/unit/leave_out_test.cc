// `gpu_profiler leave-out` (gpu_model/profile/leave_out.h): a copy of a profile without a
// program's recordings, as bench/accuracy's left-out tables simulate with.  The real tool
// imports and leaves out, as a user runs it.
#include "gpu_model/profile/op_stats.h"
#include "gpu_model/profile/profile_reader.h"
#include "gpu_profiler_tool.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace
{

namespace fs = std::filesystem;
using phantora::profile::OpKind;
using phantora::profile::ProfileReader;
using phantora::test::GpuProfiler;
using Result = phantora::test::ToolResult;

class LeaveOut : public ::testing::Test
{
protected:
    void SetUp() override
    {
        m_dir = fs::temp_directory_path() /
                ("phantora-leave-out-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        // train_gpt.py twice (the torch example and Megatron's, which share the name) and
        // another program; k_shared is measured by both programs, k_own by train_gpt.py
        // alone.  The train_gpt.py runs' host gaps have a call site of their own
        // (copy:async) and a read-back value.
        Write("torch.tsv", "python3 examples/torch/train_gpt.py --steps 2",
              "op\tkernel\tk_shared\t1\t1\t1\t32\t1\t1\t0\t0\t1000\n"
              "op\tkernel\tk_shared\t1\t1\t1\t32\t1\t1\t0\t0\t1200\n"
              "op\tkernel\tk_own\t1\t1\t1\t32\t1\t1\t0\t0\t500\n"
              "gap\t1.1\t-1\tsync:device@x+0x1\t5\n"
              "gap\t1.1\t300\tcopy:async@x+0x9\t5\n"
              "readback\t1.1\t1\t07000000\n");
        Write("megatron.tsv", "torchrun --nproc_per_node 1 examples/megatron/train_gpt.py",
              "op\tkernel\tk_own\t1\t1\t1\t32\t1\t1\t0\t0\t700\n"
              "gap\t1.1\t-1\tsync:device@x+0x1\t5\n");
        Write("other.tsv", "python3 other.py",
              "op\tkernel\tk_shared\t1\t1\t1\t32\t1\t1\t0\t0\t3000\n"
              "op\tkernel\tk_shared\t1\t1\t1\t32\t1\t1\t0\t0\t3400\n"
              "gap\t1.1\t-1\tsync:device@x+0x1\t5\n"
              "gap\t1.1\t100\tsync:device@x+0x1\t5\n");
        const Result imported =
            GpuProfiler("import --db " + In().string() + " " + Raw("torch.tsv") + " " +
                        Raw("megatron.tsv") + " " + Raw("other.tsv"));
        ASSERT_EQ(imported.rc, 0) << imported.output;
    }
    void TearDown() override { fs::remove_all(m_dir); }

    void Write(const std::string& name, const std::string& command, const std::string& body)
    {
        std::ofstream(m_dir / name) << "meta\tgpu_model\tH200\n"
                                    << "meta\tcommand\t" << command << "\n"
                                    << "meta\thost_speed_ns\t1500.000\n"
                                    << body;
    }
    std::string Raw(const std::string& name) const { return (m_dir / name).string(); }
    fs::path In() const { return m_dir / "in.sqlite"; }
    fs::path Out() const { return m_dir / "out.sqlite"; }
    std::string LeaveOutArgs(const std::string& programs) const
    {
        return "leave-out --db " + In().string() + " --out " + Out().string() + " " + programs;
    }

    fs::path m_dir;
};

const phantora::profile::OpStats& Kernel(const ProfileReader& r, const std::string& name)
{
    for (const auto& [key, stats] : r.Ops())
    {
        if (key.kind == OpKind::Kernel && key.name == name)
        {
            return stats;
        }
    }
    throw std::runtime_error("no kernel " + name + " in " + r.File().string());
}

size_t GapsOf(const ProfileReader& r, const std::string& run)
{
    size_t n = 0;
    for (const auto& s : r.HostSequences({run}))
    {
        n += s.labels.size();
    }
    return n;
}

TEST_F(LeaveOut, TheProgramsRecordingsGoAndSharedOpsKeepTheOthersSamplesOnly)
{
    const Result r = GpuProfiler(LeaveOutArgs("--program train_gpt.py"));
    ASSERT_EQ(r.rc, 0) << r.output;
    EXPECT_NE(r.output.find("torch.tsv (train_gpt.py): removed 3 kernel samples, 2 host gaps, 1 "
                            "read-back values"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("left out train_gpt.py: 2 runs, 4 kernel samples, 3 host gaps, 1 "
                            "read-back values"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("ops: 1 dropped (no other run measured them), 1 recomputed from "
                            "other runs' samples (1 with another median), 1 kept"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("dropped 1 boundary labels"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("wrote " + Out().string()), std::string::npos) << r.output;

    const ProfileReader out(Out());
    // Both train_gpt.py runs are gone, rows and host time; the other program's stay.
    ASSERT_EQ(out.Runs().size(), 1u);
    EXPECT_EQ(out.Runs().begin()->first, "other.tsv");
    EXPECT_TRUE(out.Runs().at("other.tsv").hostGaps);
    EXPECT_EQ(GapsOf(out, "other.tsv"), 2u);
    EXPECT_EQ(GapsOf(out, "torch.tsv"), 0u);
    EXPECT_EQ(GapsOf(out, "megatron.tsv"), 0u);
    EXPECT_EQ(out.Metadata().at("left_out_programs"), "train_gpt.py");
    // k_own was train_gpt.py's alone; k_shared holds other.py's two samples, its statistics
    // theirs: median 3200, p10 3040, p90 3360, sd 200 (not 1000/1200/3000/3400's 2100).
    ASSERT_EQ(out.Ops().size(), 1u);
    const auto& shared = Kernel(out, "k_shared");
    EXPECT_EQ(shared.samples, 2);
    EXPECT_DOUBLE_EQ(shared.medianNs, 3200);
    EXPECT_DOUBLE_EQ(shared.p10Ns, 3040);
    EXPECT_DOUBLE_EQ(shared.p90Ns, 3360);
    EXPECT_DOUBLE_EQ(shared.meanNs, 3200);
    EXPECT_DOUBLE_EQ(shared.stddevNs, 200);
    EXPECT_EQ(shared.source, "record");
    EXPECT_EQ(shared.ProgramMedian("train_gpt.py"), nullptr);
    ASSERT_NE(shared.ProgramMedian("other.py"), nullptr);
    EXPECT_DOUBLE_EQ(*shared.ProgramMedian("other.py"), 3200);

    // The input is unchanged.
    const ProfileReader in(In());
    EXPECT_EQ(in.Runs().size(), 3u);
    EXPECT_EQ(in.Ops().size(), 2u);
    EXPECT_EQ(Kernel(in, "k_shared").samples, 4);
    EXPECT_DOUBLE_EQ(Kernel(in, "k_shared").medianNs, 2100);
    EXPECT_EQ(GapsOf(in, "torch.tsv"), 2u);
}

TEST_F(LeaveOut, TwoProgramsLeaveAnEmptyProfileOfTheSameGpu)
{
    const Result r = GpuProfiler(LeaveOutArgs("--program other.py --program train_gpt.py"));
    ASSERT_EQ(r.rc, 0) << r.output;
    const ProfileReader out(Out());
    EXPECT_TRUE(out.Ops().empty());
    EXPECT_TRUE(out.Runs().empty());
    EXPECT_EQ(out.GpuModel(), "H200");
    EXPECT_EQ(out.Metadata().at("left_out_programs"), "other.py train_gpt.py");
}

TEST_F(LeaveOut, AnUnknownProgramIsRefusedListingTheProgramsAndNothingIsWritten)
{
    const Result r = GpuProfiler(LeaveOutArgs("--program train_gpt.py --program gpt.py"));
    EXPECT_EQ(r.rc, 1) << r.output;
    EXPECT_NE(r.output.find("profile " + In().string() + ": no run of program \"gpt.py\""),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("its programs:\n  other.py (1 run)\n  train_gpt.py (2 runs)"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(Out()));
    EXPECT_FALSE(fs::exists(m_dir / "out.sqlite.partial"));

    // The input is never the output; a missing input is named.
    const Result same = GpuProfiler("leave-out --db " + In().string() + " --out " + In().string() +
                                    " --program other.py");
    EXPECT_EQ(same.rc, 1);
    EXPECT_NE(same.output.find("--out names the same file"), std::string::npos) << same.output;
    EXPECT_EQ(ProfileReader(In()).Runs().size(), 3u);
    const Result missing = GpuProfiler("leave-out --db " + Raw("no.sqlite") + " --out " +
                                       Out().string() + " --program other.py");
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.output.find("profile " + Raw("no.sqlite") + ": no such file"),
              std::string::npos)
        << missing.output;
    EXPECT_FALSE(fs::exists(m_dir / "no.sqlite"));
}

TEST_F(LeaveOut, AnExistingOutputIsReplaced)
{
    std::ofstream(Out()) << "not a profile";
    const Result r = GpuProfiler(LeaveOutArgs("--program other.py"));
    ASSERT_EQ(r.rc, 0) << r.output;
    const ProfileReader out(Out());
    EXPECT_EQ(out.Runs().size(), 2u);
    EXPECT_DOUBLE_EQ(Kernel(out, "k_shared").medianNs, 1100);
}

} // namespace
