// `gpu_profiler forget-host-time` (gpu_model/profile/forget_host_time.h): a program's older
// host-time recordings leave the profile, its kernel samples stay.  The real tool imports
// and forgets, as a user runs it.
#include "gpu_model/profile/profile_reader.h"
#include "gpu_profiler_tool.h"
#include "host_time_profile.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace
{

namespace fs = std::filesystem;

using phantora::test::GpuProfiler;
using Result = phantora::test::ToolResult;

class ForgetHostTime : public ::testing::Test
{
protected:
    void SetUp() override
    {
        m_dir = fs::temp_directory_path() /
                ("phantora-forget-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        // Two host-time recordings of one program, each with a kernel of its own; the old
        // one's gaps are slow (900 ns), with a call site the new one never reaches and a
        // read-back value.
        WriteRaw("old.tsv", "k_old", 900, true);
        WriteRaw("new.tsv", "k_new", 100, false);
        const Result imported = GpuProfiler(Expand("import --db {db} {dir}/old.tsv {dir}/new.tsv"));
        ASSERT_EQ(imported.rc, 0) << imported.output;
    }
    void TearDown() override { fs::remove_all(m_dir); }

    void WriteRaw(const std::string& name, const std::string& kernel, int gapNs, bool extra)
    {
        std::ofstream out(m_dir / name);
        out << "meta\tgpu_model\tH200\n"
            << "meta\tcommand\tpython3 train_gpt.py --steps 2\n"
            << "meta\thost_speed_ns\t1500.000\n"
            << "op\tkernel\t" << kernel << "\t1\t1\t1\t32\t1\t1\t0\t0\t1000\n"
            << "op\tkernel\t" << kernel << "\t1\t1\t1\t32\t1\t1\t0\t0\t1200\n"
            << "gap\t1.1\t-1\tsync:device@x+0x1\t5\n"
            << "gap\t1.1\t" << gapNs << "\tsync:device@x+0x1\t5\n";
        if (extra)
        {
            out << "gap\t1.1\t" << gapNs << "\tcopy:async@x+0x9\t5\n"
                << "readback\t1.1\t2\t07000000\n";
        }
    }
    /// \p s with {db} and {dir} replaced.
    std::string Expand(std::string s) const
    {
        for (const auto& [key, value] :
             {std::pair<std::string, std::string>{"{db}", Db().string()}, {"{dir}", m_dir}})
        {
            for (size_t at; (at = s.find(key)) != std::string::npos;)
            {
                s.replace(at, key.size(), value);
            }
        }
        return s;
    }
    fs::path Db() const { return m_dir / "p.sqlite"; }

    fs::path m_dir;
};

size_t GapsOf(const phantora::profile::ProfileReader& r, const std::string& run)
{
    size_t n = 0;
    for (const auto& s : r.HostSequences({run}))
    {
        n += s.labels.size();
    }
    return n;
}

TEST_F(ForgetHostTime, OnlyTheOtherRunsGapsMakeTheTableAndTheKernelSamplesStay)
{
    {
        const phantora::profile::ProfileReader before(Db());
        ASSERT_EQ(GapsOf(before, "old.tsv"), 3u);
        ASSERT_EQ(GapsOf(before, "new.tsv"), 2u);
    }
    const Result forgot = GpuProfiler(Expand("forget-host-time --db {db} old.tsv"));
    ASSERT_EQ(forgot.rc, 0) << forgot.output;
    EXPECT_NE(forgot.output.find("old.tsv: removed 3 host gaps and 1 read-back values"),
              std::string::npos)
        << forgot.output;
    // copy:async@x+0x9 was the old run's alone
    EXPECT_NE(forgot.output.find("dropped 1 boundary labels"), std::string::npos) << forgot.output;

    const phantora::profile::ProfileReader r(Db());
    const auto& old = r.Runs().at("old.tsv");
    EXPECT_FALSE(old.hostGaps);
    EXPECT_FALSE(old.hostSpeedNs) << "the speed was measured around the forgotten pass";
    EXPECT_FALSE(old.hostTimeForgotten.empty());
    EXPECT_EQ(old.program, "train_gpt.py") << "the runs row stays";
    EXPECT_TRUE(r.Runs().at("new.tsv").hostGaps);
    EXPECT_EQ(GapsOf(r, "old.tsv"), 0u);
    EXPECT_EQ(GapsOf(r, "new.tsv"), 2u);
    // The simulation's host-time table: the new recording's gaps alone.
    phantora::CpuSpec cpu;
    cpu.localScale = 1.0;
    const auto p =
        phantora::HostTimeProfile::Prepare(&r, {"python3", "train_gpt.py", "--steps", "2"}, 1, cpu);
    EXPECT_EQ(p.runs, std::vector<std::string>{"new.tsv"});
    EXPECT_EQ(p.gaps, 2u);
    EXPECT_EQ(p.recordedReads, 0u);
    // Both runs' kernel samples, and the program's medians over them.
    ASSERT_EQ(r.Ops().size(), 2u);
    for (const auto& [key, stats] : r.Ops())
    {
        EXPECT_EQ(stats.samples, 2) << key.Describe();
        EXPECT_DOUBLE_EQ(stats.medianByProgramNs.at("train_gpt.py"), stats.medianNs);
    }

    // Importing the old raw log again (a rebuild) brings its kernels, not its host time.
    const Result again = GpuProfiler(Expand("import --db {db} {dir}/old.tsv"));
    ASSERT_EQ(again.rc, 0) << again.output;
    EXPECT_NE(again.output.find("its host time was forgotten"), std::string::npos) << again.output;
    const phantora::profile::ProfileReader after(Db());
    EXPECT_EQ(GapsOf(after, "old.tsv"), 0u);
    EXPECT_FALSE(after.Runs().at("old.tsv").hostSpeedNs);
}

TEST_F(ForgetHostTime, AnUnknownRunIsRefusedNamingItAndNothingChanges)
{
    const Result r = GpuProfiler(Expand("forget-host-time --db {db} old.tsv nope.tsv.zst"));
    EXPECT_EQ(r.rc, 1) << r.output;
    EXPECT_NE(r.output.find("run \"nope.tsv.zst\" is not a run of this profile"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("the runs that hold host time:\n  new.tsv (2 gaps, 0 read-back "
                            "values)\n  old.tsv (3 gaps, 1 read-back values)"),
              std::string::npos)
        << r.output;
    // old.tsv, valid, keeps its host time: one transaction.
    const phantora::profile::ProfileReader reader(Db());
    EXPECT_EQ(GapsOf(reader, "old.tsv"), 3u);
    EXPECT_TRUE(reader.Runs().at("old.tsv").hostSpeedNs);

    // A run already forgotten holds no host time; a pattern must match one that does; a
    // missing file is named.
    ASSERT_EQ(GpuProfiler(Expand("forget-host-time --db {db} --like o%")).rc, 0);
    const Result twice = GpuProfiler(Expand("forget-host-time --db {db} old.tsv"));
    EXPECT_EQ(twice.rc, 1);
    EXPECT_NE(twice.output.find("run \"old.tsv\" holds no host time (forgotten at "),
              std::string::npos)
        << twice.output;
    const Result none = GpuProfiler(Expand("forget-host-time --db {db} --like x%"));
    EXPECT_EQ(none.rc, 1);
    EXPECT_NE(none.output.find("--like \"x%\" matches no run that holds host time"),
              std::string::npos)
        << none.output;
    const Result missing = GpuProfiler(Expand("forget-host-time --db {dir}/no.sqlite old.tsv"));
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.output.find(Expand("profile {dir}/no.sqlite: no such file")),
              std::string::npos)
        << missing.output;
    EXPECT_FALSE(fs::exists(m_dir / "no.sqlite"));
}

} // namespace
