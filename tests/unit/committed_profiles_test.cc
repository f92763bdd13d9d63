// The measured profiles committed in profiles/ load, describe the GPU they were
// measured on, and hold the ops of the bundled programs.
#include "gpu_model/profile/gemm_signature.h"
#include "gpu_model/profile/profile_reader.h"
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/program_name.h"
#include "gpu_model/profile/raw_log.h"
#include "gpu_model/profile/sqlite_handle.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <unistd.h>

using namespace phantora::profile;

class CommittedProfile : public ::testing::TestWithParam<std::string>
{
protected:
    std::filesystem::path File() const
    {
        return std::filesystem::path(PHANTORA_SOURCE_DIR) / "profiles" / (GetParam() + ".sqlite");
    }
};

TEST_P(CommittedProfile, MetadataNamesTheGpuAndTheSoftware)
{
    const ProfileReader r(File());
    const auto& m = r.Metadata();
    EXPECT_EQ(r.GpuModel(), GetParam());
    ASSERT_TRUE(m.count("gpu_name"));
    EXPECT_NE(m.at("gpu_name").find(GetParam()), std::string::npos) << m.at("gpu_name");
    EXPECT_EQ(m.at("compute_capability"), "9.0");
    for (const char* key : {"nvidia_driver", "cuda_driver_version", "cuda_runtime_version",
                            "cublas_version", "cupti_api_version", "sm_count"})
    {
        ASSERT_TRUE(m.count(key)) << key;
        EXPECT_FALSE(m.at(key).empty()) << key;
    }
}

TEST_P(CommittedProfile, HoldsTheBundledProgramsOps)
{
    const ProfileReader r(File());
    OpKey step;
    step.kind = OpKind::Kernel;
    step.name = "phantora_step_kernel(float*, unsigned long, float)";
    step.grid = {1024, 1, 1};
    step.block = {256, 1, 1};
    const OpStats* s = r.Find(step);
    ASSERT_NE(s, nullptr);
    EXPECT_GE(s->samples, 20);
    EXPECT_LE(s->p10Ns, s->medianNs);
    EXPECT_LE(s->medianNs, s->p90Ns);
    for (const char* gemm :
         {"cublasGemmEx(m=4096,n=4096,k=4096,op=NT,a=bf16,b=bf16,c=bf16,batch=1)",
          "cublasSgemm(m=128,n=128,k=128,op=NN,a=f32,b=f32,c=f32,batch=1)",
          "cublasGemmStridedBatchedEx(m=64,n=64,k=32,op=TN,a=f16,b=f16,c=f16,batch=12)",
          "cublasLtMatmul(m=1024,n=512,k=256,op=TN,a=bf16,b=bf16,c=bf16,batch=1,epilogue=4)"})
    {
        OpKey k;
        k.kind = OpKind::Gemm;
        k.name = gemm;
        const OpStats* g = r.Find(k);
        ASSERT_NE(g, nullptr) << gemm;
        // no GEMM beats the tensor cores' dense peak (~1000 TFLOP/s on Hopper)
        EXPECT_GT(g->medianNs, GemmSignature::Parse(gemm)->Flops() / 1e15 * 1e9) << gemm;
    }
}

// The interposer names a conjugate transpose on real data "T" (cuda_abi/cuda_type_names.h
// GemmOperationName) because every committed GEMM key is real and spells only N and T.
TEST_P(CommittedProfile, GemmKeysAreRealAndSpellOnlyNAndT)
{
    const ProfileReader r(File());
    int gemms = 0;
    for (const auto& [key, stats] : r.Ops())
    {
        const auto g = GemmSignature::Parse(key.name);
        if (!g)
        {
            continue;
        }
        ++gemms;
        EXPECT_TRUE((g->opA == 'N' || g->opA == 'T') && (g->opB == 'N' || g->opB == 'T'))
            << key.name;
        for (const std::string& type : {g->a, g->b, g->c})
        {
            EXPECT_GT(DataTypeBytes(type), 0) << key.name;
        }
    }
    EXPECT_GT(gemms, 0);
}

INSTANTIATE_TEST_SUITE_P(Profiles, CommittedProfile, ::testing::Values("H100", "H200"));

namespace
{
/// Raw logs in data/raw/profiles: plain (.tsv) or compressed (.tsv.zst, RawLog::Read).
bool IsRawLog(const std::filesystem::path& p)
{
    const std::string name = p.filename().string();
    auto endsWith = [&](const std::string& tail)
    {
        return name.size() > tail.size() &&
               name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
    };
    return endsWith(".tsv") || endsWith(".tsv.zst");
}

/// A raw log of the profile: not in a folder that says, with a NOT-IMPORTED file and its
/// reason, that its logs are kept beside the profile rather than in it (the accuracy
/// harness imports such a folder into its own copy: bench/accuracy/accuracy.py).
bool IsImportedRawLog(const std::filesystem::path& p)
{
    return IsRawLog(p) && !std::filesystem::exists(p.parent_path() / "NOT-IMPORTED");
}
} // namespace

// Every number in a committed profile comes from its committed raw logs (data/raw/profiles/
// <GPU>/ and its folders, one per lease where a lease brought many): importing them afresh
// gives the same ops with the same statistics.
TEST_P(CommittedProfile, IsTheImportOfItsRawLogs)
{
    const std::filesystem::path rawDir =
        std::filesystem::path(PHANTORA_SOURCE_DIR) / "data" / "raw" / "profiles" / GetParam();
    const std::filesystem::path db =
        std::filesystem::temp_directory_path() /
        ("phantora-reimport-" + GetParam() + "-" + std::to_string(::getpid()) + ".sqlite");
    std::filesystem::remove(db);
    {
        ProfileWriter w(db);
        std::vector<std::filesystem::path> logs;
        for (const auto& e : std::filesystem::recursive_directory_iterator(rawDir))
        {
            if (IsImportedRawLog(e.path()))
            {
                logs.push_back(e.path());
            }
        }
        ASSERT_FALSE(logs.empty()) << rawDir;
        for (const auto& log : logs)
        {
            const RawLog raw = RawLog::Read(log);
            for (const auto& [key, durations] : raw.samples)
            {
                w.AddSamples(key, durations, log.filename().string(), "reimport",
                             raw.sampleArgs.at(key));
            }
        }
        w.SetMetadata("gpu_model", GetParam());
        w.Commit();
    }
    const ProfileReader fresh(db);
    const ProfileReader committed(File());
    // every raw log that recorded its command names its program in the runs table
    for (const auto& e : std::filesystem::recursive_directory_iterator(rawDir))
    {
        if (!IsImportedRawLog(e.path()))
        {
            continue;
        }
        const RawLog raw = RawLog::Read(e.path());
        auto command = raw.metadata.find("command");
        if (command != raw.metadata.end())
        {
            const auto run = committed.RunPrograms().find(e.path().filename().string());
            ASSERT_NE(run, committed.RunPrograms().end()) << e.path();
            EXPECT_EQ(run->second, ProgramName(command->second)) << e.path();
        }
        // and every host-time gap it recorded is in the profile, in order, unless
        // `gpu_profiler forget-host-time` removed them all (a re-recorded program)
        if (!raw.hostThreads.empty())
        {
            const auto run = committed.Runs().find(e.path().filename().string());
            ASSERT_NE(run, committed.Runs().end()) << e.path();
            if (!run->second.hostTimeForgotten.empty())
            {
                EXPECT_FALSE(run->second.hostGaps) << e.path();
                EXPECT_TRUE(committed.HostSequences({run->first}).empty()) << e.path();
                continue;
            }
            EXPECT_TRUE(run->second.hostGaps) << e.path();
            std::size_t recorded = 0, stored = 0;
            for (const auto& [thread, seq] : raw.hostThreads)
            {
                recorded += seq.labels.size();
            }
            for (const auto& seq : committed.HostSequences({run->first}))
            {
                stored += seq.labels.size();
            }
            EXPECT_EQ(stored, recorded) << e.path();
        }
    }
    ASSERT_EQ(fresh.Ops().size(), committed.Ops().size());
    for (const auto& [key, stats] : committed.Ops())
    {
        const OpStats* f = fresh.Find(key);
        ASSERT_NE(f, nullptr) << key.Describe();
        EXPECT_EQ(f->samples, stats.samples) << key.Describe();
        EXPECT_DOUBLE_EQ(f->medianNs, stats.medianNs) << key.Describe();
        EXPECT_DOUBLE_EQ(f->p90Ns, stats.p90Ns) << key.Describe();
        EXPECT_EQ(f->medianByArgsNs, stats.medianByArgsNs) << key.Describe();
    }
    std::filesystem::remove(db);
}

TEST(RawLog, AMalformedLineIsRefusedNamingTheFileAndLine)
{
    const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                       ("phantora-bad-raw-" + std::to_string(::getpid()) + ".tsv");
    std::ofstream(file) << "meta\tgpu_model\tH200\n"
                        << "op\tkernel\tk()\t1\t1\t1\t32\t1\t1\t0\t0\t1500\n"
                        << "op\tkernel\tk()\t1\t1\t1\t32\t1\t1\t0\t0\tfast\n";
    try
    {
        RawLog::Read(file);
        FAIL() << "accepted a duration of 'fast'";
    }
    catch (const ProfileError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find(file.string() + ":3"), std::string::npos) << what;
        EXPECT_NE(what.find("fast"), std::string::npos) << what;
    }
}

// `gpu_profiler record -- torchrun ...`: the launcher and each worker run under the
// recorder, each writes "<raw>.<pid>.part" if it ran GPU work, and the parts are joined.
TEST(RawLog, TheHostTimePassKeepsItsGapAndReadbackLines)
{
    // gpu_profiler record appends the host-time pass's log to the recording: the bytes the
    // program read back must come along with the gaps (they were dropped until 2026-11-26).
    std::istringstream pass("meta\tsource\thost-time\n"
                            "gap\t7.7\t-1\tcopy:async@libtorch_cuda.so+0x10\t900\n"
                            "gap\t7.7\t120\tsync:stream@libtorch_cuda.so+0x20\t-1\n"
                            "readback\t7.7\t0\t0000c841\n");
    const std::filesystem::path raw = std::filesystem::temp_directory_path() /
                                      ("phantora-hostpass-" + std::to_string(::getpid()) + ".tsv");
    {
        std::ofstream out(raw);
        out << "meta\tsource\trecord\n";
        EXPECT_EQ(AppendHostPass(pass, out), 3u);
    }
    const RawLog log = RawLog::Read(raw);
    ASSERT_EQ(log.hostThreads.count("7.7"), 1u);
    const auto& thread = log.hostThreads.at("7.7");
    EXPECT_EQ(thread.labels.size(), 2u);
    ASSERT_EQ(thread.reads.count(0), 1u);
    EXPECT_EQ(thread.reads.at(0), std::string("\x00\x00\xc8\x41", 4)); // 25.0f
    EXPECT_EQ(log.metadata.at("source"), "record"); // the pass's own metadata stays behind
    std::filesystem::remove(raw);
}

TEST(RawLog, EachRecordingProcesssPartIsJoinedIntoOneLog)
{
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("phantora-parts-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::filesystem::path raw = dir / "run.tsv";
    std::ofstream(dir / "run.tsv.4100.part") << "meta\tcupti_api_version\t130001\n"
                                             << "meta\tsource\trecord\n"
                                             << "meta\tdropped_records\t2\n"
                                             << "op\tkernel\tk()\t1\t1\t1\t32\t1\t1\t0\t0\t1500\n";
    std::ofstream(dir / "run.tsv.977.part")
        << "meta\tcupti_api_version\t130001\n"
        << "meta\tdropped_records\t1\n"
        << "op\tkernel\tk()\t1\t1\t1\t32\t1\t1\t0\t0\t1700\t0=5\n"
        << "op\tmemcpy\tHtoD\t0\t0\t0\t0\t0\t0\t0\t64\t900\n";
    std::ofstream(dir / "run.tsv.notapid.part") << "ignored\n";
    std::ofstream(dir / "other.tsv.977.part") << "ignored\n";

    const auto parts = RawParts(raw);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].filename(), "run.tsv.977.part"); // pid order
    EXPECT_EQ(parts[1].filename(), "run.tsv.4100.part");
    JoinRawParts(parts, raw);

    const RawLog log = RawLog::Read(raw);
    EXPECT_EQ(log.metadata.at("processes"), "2");
    EXPECT_EQ(log.metadata.at("dropped_records"), "3");
    EXPECT_EQ(log.metadata.at("source"), "record");
    OpKey k;
    k.name = "k()";
    k.grid = {1, 1, 1};
    k.block = {32, 1, 1};
    ASSERT_EQ(log.samples.count(k), 1u);
    EXPECT_EQ(log.samples.at(k), (std::vector<int64_t>{1700, 1500}));
    EXPECT_EQ(log.sampleArgs.at(k), (std::vector<std::string>{"0=5", ""}));
    EXPECT_EQ(log.samples.size(), 2u);

    std::ofstream(dir / "run.tsv.5.part") << "op\tkernel\tk()\tbroken\n";
    try
    {
        JoinRawParts(RawParts(raw), raw);
        FAIL() << "joined a malformed part";
    }
    catch (const ProfileError& e)
    {
        EXPECT_NE(std::string(e.what()).find("run.tsv.5.part:1"), std::string::npos) << e.what();
    }
    std::filesystem::remove_all(dir);
}
