// Writes the seed corpora of the raw-log and profile-reader fuzzers: a raw log with every
// line kind (meta, op with and without launch arguments, gap with and without the call's
// time, readback), plain and zstd-compressed (the first byte picks the form in
// raw_log_fuzz.cc), and the profile database that log imports to, made small (512-byte
// pages) so that the fuzzer's mutations reach every table.
//
// usage: phantora-profile-seeds RAW_DIRECTORY PROFILE_DIRECTORY
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/raw_log.h"

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <string>
#include <vector>
#include <zstd.h>

using namespace phantora::profile;
namespace fs = std::filesystem;

namespace
{

/// Two threads of a small training loop, each call with its site: enough steady steps
/// for the host-time model to learn keys from.
std::string SeedLog()
{
    std::string log = "meta\tgpu_name\tNVIDIA H200\nmeta\tgpu_model\tH200\n"
                      "meta\tcompute_capability\t9.0\nmeta\tsource\trecord\n"
                      "meta\tdropped_records\t0\nmeta\tprocesses\t1\n"
                      "meta\thost_speed_ns\t812.500\n"
                      "meta\tcommand\ttorchrun --nproc_per_node 2 examples/torch/train_gpt.py "
                      "--mode ddp --steps 6\n";
    log += "op\tkernel\tvoid at::native::vectorized_elementwise_kernel<4>(int)\t128\t1\t1\t128\t1"
           "\t1\t0\t0\t11167\t1=0\n";
    log += "op\tgemm\tcublasLtMatmul bf16 [512x512x512]\t0\t0\t0\t0\t0\t0\t0\t0\t52311\n";
    log += "op\tmemcpy\tHtoD\t0\t0\t0\t0\t0\t0\t0\t4096\t2300\n";
    log += "op\tmemset\tmemset\t0\t0\t0\t0\t0\t0\t0\t65536\t1800\n";
    log += "op\tcudnn\tcudnnConvolutionForward sig\t0\t0\t0\t0\t0\t0\t0\t0\t90210\n";
    const char* labels[] = {
        "launch:kernel@libtorch_cuda.so+0x1000", "launch:gemm@libtorch_cuda.so+0x2000",
        "copy:async@libtorch_cuda.so+0x3000", "sync:stream@libtorch_cuda.so+0x4000"};
    for (const char* thread : {"100.100", "100.101"})
    {
        log += fmt::format("gap\t{}\t-1\tcomm:init@libtorch_cuda.so+0x10\t-1\n", thread);
        for (int i = 1; i < 48; ++i)
        {
            log += fmt::format("gap\t{}\t{}\t{}\t{}\n", thread, 2000 + 37 * (i % 5), labels[i % 4],
                               i % 4 == 3 ? -1 : 4000 + i);
        }
        log += fmt::format("gap\t{}\t5123\t{}\n", thread, labels[0]); // no call time
        log += fmt::format("readback\t{}\t3\t0000c841\n", thread);
    }
    return log;
}

void Write(const fs::path& file, char form, const std::string& bytes)
{
    std::ofstream(file, std::ios::binary | std::ios::trunc) << form << bytes;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 3)
    {
        std::fprintf(stderr, "usage: phantora-profile-seeds RAW_DIRECTORY PROFILE_DIRECTORY\n");
        return 2;
    }
    const fs::path rawDir = argv[1];
    const fs::path profileDir = argv[2];
    fs::create_directories(rawDir);
    fs::create_directories(profileDir);
    const std::string log = SeedLog();
    Write(rawDir / "log", '\0', log);
    std::string z(ZSTD_compressBound(log.size()), '\0');
    z.resize(ZSTD_compress(z.data(), z.size(), log.data(), log.size(), 3));
    Write(rawDir / "log-zstd", '\1', z);

    // The database `gpu_profiler import` makes of it (gpu_profiler_main.cc Import).
    const fs::path raw = profileDir / "seed.tsv";
    std::ofstream(raw) << log;
    const RawLog read = RawLog::Read(raw);
    const fs::path db = profileDir / "seed.sqlite";
    fs::remove(db);
    {
        ProfileWriter w(db);
        for (const char* key : {"gpu_name", "gpu_model", "compute_capability"})
        {
            w.SetMetadata(key, read.metadata.at(key));
        }
        const std::string run = raw.filename().string();
        w.AddRun(run, "train_gpt.py", read.metadata.at("command"));
        w.SetRunHostSpeed(run, std::stod(read.metadata.at("host_speed_ns")));
        w.SetHostGaps(run, read.hostThreads);
        for (const auto& [key, durations] : read.samples)
        {
            w.AddSamples(key, durations, run, "record", read.sampleArgs.at(key));
        }
        w.Commit();
    }
    {
        SqliteDb small(db, false);
        small.Exec("PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM");
    }
    fs::remove(raw);
    std::printf("seeds: %s (2), %s (%ju bytes)\n", rawDir.c_str(), db.c_str(),
                static_cast<uintmax_t>(fs::file_size(db)));
    return 0;
}
