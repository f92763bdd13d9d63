// gpu_profiler: fills the profile cache on one real GPU.
//   record [--raw F] [--db F] -- CMD ARGS   run CMD under the CUPTI recorder, then again
//                                            for its host time (--no-host-time: not;
//                                            --host-time-only: only that)
//   replay --missing F [--raw F] [--db F]   measure the GEMMs, copies and cuDNN ops a
//          [--python PY]                    simulation missed
//   import --db F RAW...                     merge raw logs into a profile database
//   label-runs --db F RAW...                 name the programs of runs merged before
//   forget-host-time --db F [RUN...]         remove runs' host time (a re-recorded
//          [--like PATTERN]... [--dry-run]   program's older recordings)
//   leave-out --db F --out F --program NAME  a copy of a profile without a program's
//          [--program NAME]...               recordings (accuracy on unrecorded programs)
//   info --db F                              what a profile holds
//   kernel-params FILE [--kernel TEXT]       the parameter layouts a binary's kernels have
#include "cuda_abi/kernel_params.h"
#include "gpu_model/profile/forget_host_time.h"
#include "gpu_model/profile/leave_out.h"
#include "gpu_model/profile/profile_reader.h"
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/program_name.h"
#include "gpu_model/profile/raw_log.h"
#include "host_time/host_speed.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <cxxabi.h>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace phantora::profile;

namespace
{

fs::path SelfDir()
{
    return fs::read_symlink("/proc/self/exe").parent_path();
}

/// Runs \p argv to completion with \p env added; returns its exit status.
int RunChild(const std::vector<std::string>& argv,
             const std::vector<std::pair<std::string, std::string>>& env, const fs::path* stdoutTo)
{
    const pid_t pid = fork();
    if (pid < 0)
    {
        throw std::runtime_error("fork failed");
    }
    if (pid == 0)
    {
        for (const auto& [k, v] : env)
        {
            setenv(k.c_str(), v.c_str(), 1);
        }
        if (stdoutTo)
        {
            std::FILE* f = std::freopen(stdoutTo->c_str(), "a", stdout);
            if (!f)
            {
                _exit(126);
            }
        }
        std::vector<char*> args;
        for (const auto& a : argv)
        {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        execvp(args[0], args.data());
        std::fprintf(stderr, "gpu_profiler: cannot run %s: %s\n", args[0], std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Runs \p cmd under the recorder into \p raw (its processes' parts joined); 0 on success.
int RecordPass(const std::vector<std::string>& cmd, const fs::path& raw,
               std::vector<std::pair<std::string, std::string>> env)
{
    const fs::path recorder = SelfDir() / "libphantora_recorder.so";
    std::string preload = recorder.string();
    if (const char* old = std::getenv("LD_PRELOAD"))
    {
        preload += std::string(":") + old;
    }
    for (const auto& stale : RawParts(raw))
    {
        fs::remove(stale);
    }
    env.emplace_back("LD_PRELOAD", preload);
    env.emplace_back("PHANTORA_RECORD_OUT", raw.string());
    const int rc = RunChild(cmd, env, nullptr);
    if (rc != 0)
    {
        std::fprintf(stderr, "gpu_profiler: %s exited with status %d\n", cmd[0].c_str(), rc);
        return rc;
    }
    const std::vector<fs::path> parts = RawParts(raw);
    if (parts.empty())
    {
        std::fprintf(stderr,
                     "gpu_profiler: no process of %s recorded GPU work into %s.*.part (did it use "
                     "the GPU?)\n",
                     cmd[0].c_str(), raw.c_str());
        return 1;
    }
    JoinRawParts(parts, raw);
    for (const auto& part : parts)
    {
        fs::remove(part);
    }
    return 0;
}

/// The host-time pass (recorder_host_gaps.h): the program again, with CUPTI off, and the
/// host's speed before and after; its gap lines and the speed go into \p raw.
int RecordHostTime(const std::vector<std::string>& cmd, const fs::path& raw)
{
    const double before = phantora::host_time::MeasureHostSpeedNs();
    fs::path pass = raw;
    pass += ".host";
    if (const int rc = RecordPass(cmd, pass, {{"PHANTORA_RECORD_HOST_ONLY", "1"}}); rc != 0)
    {
        return rc;
    }
    const double after = phantora::host_time::MeasureHostSpeedNs();
    std::ofstream out(raw, std::ios::app);
    out << fmt::format("meta\thost_speed_ns\t{:.3f}\n", std::min(before, after));
    std::ifstream in(pass);
    phantora::profile::AppendHostPass(in, out);
    fs::remove(pass);
    std::printf("gpu_profiler: host-time pass done (host speed %.1f ns per round before, %.1f "
                "after)\n",
                before, after);
    return 0;
}

/// The program under the recorder (unless \p kernels is false: host time only), then the
/// device facts appended to the same raw log.
int Record(const std::vector<std::string>& cmd, const fs::path& raw, const std::string& source,
           bool hostTime, bool kernels = true)
{
    if (kernels)
    {
        if (const int rc = RecordPass(cmd, raw, {{"PHANTORA_RECORD_SOURCE", source}}); rc != 0)
        {
            return rc;
        }
    }
    {
        std::ofstream(raw, std::ios::app)
            << fmt::format("meta\tcommand\t{}\n", fmt::join(cmd, " "));
    }
    const int info = RunChild({(SelfDir() / "gpu_profiler_gpu").string(), "device-info"}, {}, &raw);
    if (info != 0)
    {
        std::fprintf(stderr, "gpu_profiler: gpu_profiler_gpu device-info failed (%d)\n", info);
        return info;
    }
    return hostTime ? RecordHostTime(cmd, raw) : 0;
}

/// The kinds of op a missing-ops file lists.
std::set<std::string> KindsIn(const fs::path& missing)
{
    std::ifstream in(missing);
    const nlohmann::json j = nlohmann::json::parse(in);
    std::set<std::string> kinds;
    for (const auto& op : j.at("ops"))
    {
        kinds.insert(op.at("kind").get<std::string>());
    }
    return kinds;
}

/// Replays a missing-ops file: GEMMs and copies by gpu_profiler_gpu into \p raw, cuDNN ops
/// through PyTorch (replay_cudnn.py, beside this program, run by \p python) into
/// <raw>.cudnn.tsv; the raw logs written, or an exit status.
int Replay(const fs::path& missing, const fs::path& raw, const std::string& python, int warmup,
           int iterations, std::vector<fs::path>& written)
{
    const std::set<std::string> kinds = KindsIn(missing);
    const std::vector<std::string> counts = {"--warmup", std::to_string(warmup), "--iterations",
                                             std::to_string(iterations)};
    if (kinds.count("gemm") || kinds.count("memcpy") || kinds.count("memset"))
    {
        std::vector<std::string> cmd = {(SelfDir() / "gpu_profiler_gpu").string(), "replay",
                                        missing.string()};
        cmd.insert(cmd.end(), counts.begin(), counts.end());
        if (const int rc = Record(cmd, raw, "replay", false); rc != 0)
        {
            return rc;
        }
        written.push_back(raw);
    }
    if (kinds.count("cudnn"))
    {
        const fs::path script = SelfDir() / "replay_cudnn.py";
        if (!fs::is_regular_file(script))
        {
            std::fprintf(stderr,
                         "gpu_profiler: %s is missing; copy gpu_profiler/replay_cudnn.py "
                         "beside gpu_profiler to replay cuDNN ops\n",
                         script.c_str());
            return 1;
        }
        fs::path cudnnRaw = raw;
        cudnnRaw.replace_extension(".cudnn.tsv");
        fs::remove(cudnnRaw);
        std::vector<std::string> cmd = {python, script.string(), missing.string()};
        cmd.insert(cmd.end(), counts.begin(), counts.end());
        if (const int rc = Record(cmd, cudnnRaw, "replay", false); rc != 0)
        {
            return rc;
        }
        written.push_back(cudnnRaw);
    }
    if (written.empty())
    {
        std::fprintf(stderr,
                     "gpu_profiler: %s lists nothing replayable (kernels cannot be "
                     "replayed: record their program instead)\n",
                     missing.c_str());
        return 1;
    }
    return 0;
}

/// The runs table's row for one raw log: the program it measured, from its command;
/// the program, or nothing when the log kept no command.
std::optional<std::string> NameRun(ProfileWriter& w, const fs::path& raw, const RawLog& log)
{
    auto command = log.metadata.find("command");
    if (command == log.metadata.end())
    {
        return std::nullopt;
    }
    std::string program = ProgramName(command->second);
    w.AddRun(raw.filename().string(), program, command->second);
    return program;
}

/// Names the programs of runs already merged (profiles written before the runs table).
void LabelRuns(const fs::path& db, const std::vector<fs::path>& raws)
{
    ProfileWriter w(db);
    for (const auto& raw : raws)
    {
        const auto program = NameRun(w, raw, RawLog::Read(raw));
        std::printf("%s: %s\n", raw.filename().c_str(),
                    program ? program->c_str() : "no command recorded, left unnamed");
    }
    w.Commit();
}

void Import(const fs::path& db, const std::vector<fs::path>& raws)
{
    ProfileWriter w(db);
    for (const auto& raw : raws)
    {
        const RawLog log = RawLog::Read(raw);
        for (const auto& [k, v] : log.metadata)
        {
            if (k != "command" && k != "source" && k != "dropped_records" && k != "processes" &&
                k != "host_speed_ns")
            {
                w.SetMetadata(k, v);
            }
        }
        const std::string run = raw.filename().string();
        const auto program = NameRun(w, raw, log);
        // A run whose host time was forgotten keeps it forgotten when its raw log comes
        // again (the profile's rebuild, profiles/README.md); its kernels still merge.
        const auto row = program ? w.FindRun(run) : std::nullopt;
        const bool forgotten = row && !row->hostTimeForgotten.empty();
        if (forgotten && !log.hostThreads.empty())
        {
            std::printf("%s: its host time was forgotten at %s (gpu_profiler forget-host-time): "
                        "kernel samples only\n",
                        raw.c_str(), row->hostTimeForgotten.c_str());
        }
        else if (program)
        {
            if (auto speed = log.metadata.find("host_speed_ns"); speed != log.metadata.end())
            {
                w.SetRunHostSpeed(run, std::stod(speed->second));
            }
            if (!log.hostThreads.empty())
            {
                w.SetHostGaps(run, log.hostThreads);
            }
        }
        auto src = log.metadata.find("source");
        const std::string source = src == log.metadata.end() ? "record" : src->second;
        size_t samples = 0;
        for (const auto& [key, durations] : log.samples)
        {
            w.AddSamples(key, durations, run, source, log.sampleArgs.at(key));
            samples += durations.size();
        }
        size_t gaps = 0;
        for (const auto& [thread, seq] : log.hostThreads)
        {
            gaps += forgotten ? 0 : seq.labels.size();
        }
        std::printf("%s: %zu ops, %zu samples, %zu host-time gaps in %zu threads merged into %s\n",
                    raw.c_str(), log.samples.size(), samples, gaps,
                    forgotten ? 0 : log.hostThreads.size(), db.c_str());
    }
    w.Commit();
}

int ForgetHostTimeOf(const fs::path& db, const std::vector<std::string>& runs,
                     const std::vector<std::string>& likes, bool dryRun)
{
    if (runs.empty() && likes.empty())
    {
        std::fprintf(stderr, "gpu_profiler forget-host-time: name runs, --like patterns or both\n");
        return 2;
    }
    const ForgetHostTimeResult r = ForgetHostTime(db, runs, likes, dryRun);
    for (const auto& run : r.runs)
    {
        std::printf("%s: %s %lld host gaps and %lld read-back values (kernel samples kept)\n",
                    run.run.c_str(), dryRun ? "would remove" : "removed",
                    static_cast<long long>(run.gaps), static_cast<long long>(run.readbacks));
    }
    std::printf("%s%lld boundary labels no gap uses any more%s\n",
                dryRun ? "would drop " : "dropped ", static_cast<long long>(r.labelsDropped),
                dryRun ? " (dry run: the profile is unchanged)" : "");
    return 0;
}

int LeaveOutOf(const fs::path& db, const fs::path& out, const std::vector<std::string>& programs)
{
    const LeaveOutResult r = LeaveOut(db, out, programs);
    LeftOutRun total;
    for (const auto& run : r.runs)
    {
        std::printf("%s (%s): removed %lld kernel samples, %lld host gaps, %lld read-back "
                    "values\n",
                    run.run.c_str(), run.program.c_str(), static_cast<long long>(run.samples),
                    static_cast<long long>(run.gaps), static_cast<long long>(run.readbacks));
        total.samples += run.samples;
        total.gaps += run.gaps;
        total.readbacks += run.readbacks;
    }
    std::printf("left out %s: %zu runs, %lld kernel samples, %lld host gaps, %lld read-back "
                "values\n",
                fmt::format("{}", fmt::join(programs, ", ")).c_str(), r.runs.size(),
                static_cast<long long>(total.samples), static_cast<long long>(total.gaps),
                static_cast<long long>(total.readbacks));
    std::printf("ops: %lld dropped (no other run measured them), %lld recomputed from other "
                "runs' samples (%lld with another median), %lld kept\n",
                static_cast<long long>(r.opsDropped), static_cast<long long>(r.opsRecomputed),
                static_cast<long long>(r.opsMedianChanged), static_cast<long long>(r.opsKept));
    std::printf("dropped %lld boundary labels no gap uses any more\n",
                static_cast<long long>(r.labelsDropped));
    std::printf("wrote %s\n", out.c_str());
    return 0;
}

int Info(const fs::path& db)
{
    ProfileReader r(db);
    for (const auto& [k, v] : r.Metadata())
    {
        std::printf("%-22s %s\n", k.c_str(), v.c_str());
    }
    size_t byKind[phantora::profile::kOpKinds] = {};
    for (const auto& [key, st] : r.Ops())
    {
        ++byKind[static_cast<int>(key.kind)];
    }
    std::printf("ops: %zu kernels, %zu GEMMs, %zu memcpys, %zu memsets, %zu cuDNN calls\n",
                byKind[0], byKind[1], byKind[2], byKind[3], byKind[4]);
    return 0;
}

/// The layouts the simulator and the recorder read from a binary (kernel_params.h),
/// for a user to see which arguments will key a kernel.
int ListKernelParams(const fs::path& file, const std::string& filter)
{
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto layouts = phantora::kernel_args::ParamLayoutsInImage(bytes);
    if (layouts.empty())
    {
        std::fprintf(stderr,
                     "gpu_profiler: %s holds no kernel parameter layouts (expected a cubin, a "
                     "fat binary, or a program or library with a .nv_fatbin section whose cubins "
                     "are uncompressed or zstd-compressed)\n",
                     file.c_str());
        return 1;
    }
    size_t shown = 0;
    for (const auto& [mangled, layout] : layouts)
    {
        int status = 0;
        std::unique_ptr<char, decltype(&std::free)> d(
            abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
        const std::string name = status == 0 && d ? d.get() : mangled;
        if (!filter.empty() && name.find(filter) == std::string::npos)
        {
            continue;
        }
        std::string params;
        for (size_t i = 0; i < layout.size(); ++i)
        {
            params += fmt::format(" {}@{}:{}", i, layout[i].offset, layout[i].size);
        }
        std::printf("%s\t%s\n", name.c_str(), params.empty() ? " (none)" : params.c_str() + 1);
        ++shown;
    }
    std::fprintf(stderr, "%zu of %zu kernels (ordinal@offset:size)\n", shown, layouts.size());
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"Measures GPU ops on one real GPU into a profile database (profiles/README.md)"};
    app.require_subcommand(1);
    fs::path raw, db, missing;
    std::vector<std::string> cmd;
    std::vector<fs::path> raws;
    int warmup = 5, iterations = 20;
    bool noHostTime = false;
    bool hostTimeOnly = false;

    auto* record = app.add_subcommand("record", "run a program on the GPU, recording every op");
    record->add_option("--raw", raw, "raw log to write (default: <db>.<time>.tsv)");
    record->add_option("--db", db,
                       "profile database to merge the measurements into (created if missing)");
    record->add_flag("--no-host-time", noHostTime,
                     "skip the second run that records the host time between GPU calls "
                     "(interposer/host_time.h); simulations of the program then measure it on "
                     "their own CPU");
    record
        ->add_flag("--host-time-only", hostTimeOnly,
                   "run the program once, for its host time only, keeping no GPU op "
                   "durations: for a recording at world size 2 or more (`torchrun "
                   "--nproc_per_node 2 ...`), whose host code a one-GPU run never reaches "
                   "but whose kernels share SMs with collectives and other ranks")
        ->excludes("--no-host-time");
    record->add_option("command", cmd, "the program and its arguments (after --)")->required();

    std::string python = "python3";
    auto* replay = app.add_subcommand(
        "replay", "measure the GEMMs, copies and cuDNN ops a simulation reported missing");
    replay->add_option("--missing", missing, "missing-ops JSON (phantora-cluster --missing)")
        ->required()
        ->check(CLI::ExistingFile);
    replay->add_option("--raw", raw, "raw log to write");
    replay->add_option("--db", db,
                       "profile database to merge the measurements into (created if missing)");
    replay->add_option("--warmup", warmup, "unmeasured runs of each op first")
        ->capture_default_str();
    replay->add_option("--iterations", iterations, "measured runs of each op")
        ->capture_default_str();
    replay
        ->add_option("--python", python,
                     "Python with PyTorch, to replay cuDNN ops (replay_cudnn.py; their "
                     "raw log is <raw>.cudnn.tsv)")
        ->capture_default_str();

    auto* import = app.add_subcommand("import", "merge raw logs into a profile database");
    import->add_option("--db", db, "profile database (created if missing)")->required();
    import->add_option("raw", raws, "raw logs")->required()->check(CLI::ExistingFile);

    auto* label = app.add_subcommand(
        "label-runs", "name the programs of already merged raw logs (from their commands)");
    label->add_option("--db", db, "profile database")->required()->check(CLI::ExistingFile);
    label->add_option("raw", raws, "raw logs")->required()->check(CLI::ExistingFile);

    auto* info = app.add_subcommand("info", "print a profile's metadata and size");
    info->add_option("--db", db, "profile database")->required()->check(CLI::ExistingFile);

    std::vector<std::string> forgetRuns, forgetLikes;
    bool dryRun = false;
    auto* forget = app.add_subcommand(
        "forget-host-time",
        "remove runs' host time (gaps, read-back values, host speed) from a profile, keeping "
        "their kernel samples: a program's older host-time recordings once it is re-recorded");
    // No ExistingFile check: ForgetHostTime's own error names the file as the others do.
    forget->add_option("--db", db, "profile database")->required();
    forget->add_option("run", forgetRuns,
                       "runs as the runs table names them (the raw log's file name, e.g. "
                       "megatron_dense.tsv.zst)");
    forget
        ->add_option("--like", forgetLikes,
                     "also every run holding host time whose name matches this SQL LIKE "
                     "pattern ('%' any text, '_' one character); repeatable")
        ->allow_extra_args(false);
    forget->add_flag("--dry-run", dryRun, "say what would be removed, change nothing");

    fs::path leftOutDb;
    std::vector<std::string> leftOutPrograms;
    auto* leaveOut = app.add_subcommand(
        "leave-out",
        "write a copy of a profile without every run of some programs (their kernel samples, "
        "host gaps, read-back values, runs rows), each op's statistics recomputed from the "
        "samples left: a simulation of such a program is then timed as one never recorded");
    // No ExistingFile check: LeaveOut's own error names the file as the others do.
    leaveOut->add_option("--db", db, "profile database to read (not changed)")->required();
    leaveOut->add_option("--out", leftOutDb, "the copy to write (replaced)")->required();
    leaveOut
        ->add_option("--program", leftOutPrograms,
                     "a program as the runs table names it (profile::ProgramName: "
                     "train_gpt.py, torchtitan.train); repeatable")
        ->required()
        ->allow_extra_args(false);

    fs::path binary;
    std::string kernelFilter;
    auto* params = app.add_subcommand(
        "kernel-params", "list the parameter layouts of the kernels in a cubin, fat binary or "
                         "library (what keys a kernel's launch arguments)");
    params->add_option("file", binary, "cubin, fat binary, or program or library")
        ->required()
        ->check(CLI::ExistingFile);
    params->add_option("--kernel", kernelFilter, "only kernels whose name contains this");
    CLI11_PARSE(app, argc, argv);

    try
    {
        if (*import)
        {
            Import(db, raws);
            return 0;
        }
        if (*info)
        {
            return Info(db);
        }
        if (*forget)
        {
            return ForgetHostTimeOf(db, forgetRuns, forgetLikes, dryRun);
        }
        if (*leaveOut)
        {
            return LeaveOutOf(db, leftOutDb, leftOutPrograms);
        }
        if (*params)
        {
            return ListKernelParams(binary, kernelFilter);
        }
        if (*label)
        {
            LabelRuns(db, raws);
            return 0;
        }
        if (raw.empty())
        {
            if (db.empty())
            {
                std::fprintf(stderr, "gpu_profiler: give --raw, --db or both\n");
                return 2;
            }
            raw = db;
            raw += fmt::format(".{}.tsv", std::time(nullptr));
        }
        fs::remove(raw);
        int rc = 0;
        std::vector<fs::path> written;
        if (*record)
        {
            rc = Record(cmd, raw, "record", !noHostTime, !hostTimeOnly);
            written.push_back(raw);
        }
        else
        {
            rc = Replay(missing, raw, python, warmup, iterations, written);
        }
        if (rc == 0 && !db.empty())
        {
            Import(db, written);
        }
        return rc;
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "gpu_profiler: %s\n", e.what());
        return 1;
    }
}
