#include "host_time_profile.h"

#include "gpu_model/profile/learned_host_model.h"
#include "gpu_model/profile/program_name.h"
#include "host_time/host_gap_table.h"
#include "host_time/host_speed.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

namespace phantora
{

namespace
{

/// The program's arguments as a set of "--flag=value" items (a flag with the value after
/// it) and lone words.
std::set<std::string> ArgumentItems(const std::string& arguments)
{
    std::istringstream in(arguments);
    std::vector<std::string> words;
    for (std::string w; in >> w;)
    {
        words.push_back(w);
    }
    std::set<std::string> items;
    for (std::size_t i = 0; i < words.size(); ++i)
    {
        const bool flag = words[i].rfind('-', 0) == 0;
        if (flag && words[i].find('=') == std::string::npos && i + 1 < words.size() &&
            words[i + 1].rfind('-', 0) != 0)
        {
            items.insert(words[i] + "=" + words[i + 1]);
            ++i;
        }
        else
        {
            items.insert(words[i]);
        }
    }
    return items;
}

/// Flags that set how many iterations a program runs, not what an iteration does: a
/// recording of 6 steps holds the same host time per step as a run of 12.
bool CountsIterations(const std::string& item)
{
    static const std::set<std::string> kFlags = {
        "--steps",      "--warmup",       "--warmup-steps", "--iters",
        "--iterations", "--max-steps",    "--train-iters",  "--epochs",
        "--num-steps",  "--log-interval", "--eval-iters",   "--eval-interval"};
    return kFlags.count(item.substr(0, item.find('='))) > 0;
}

/// A file path without "." parts, doubled slashes and leading ".." parts, which name a
/// directory the words do not tell ("examples/x.json" for "./examples//x.json",
/// "deepspeed/x.json" for "../deepspeed/x.json").
std::string NormalPath(const std::string& path)
{
    std::string p = std::filesystem::path(path).lexically_normal().generic_string();
    while (p.rfind("../", 0) == 0)
    {
        p.erase(0, 3);
    }
    return p.rfind("./", 0) == 0 ? p.substr(2) : p;
}

/// Whether \p a and \p b name the same file as far as their words tell: the same
/// normalised path, or one is the other's tail at a directory boundary.  A recording made
/// from the repository root with `--deepspeed_config examples/deepspeed/zero1.json`
/// is of the same program as a simulation given the file's absolute path, or started in
/// examples/deepspeed/ with `zero1.json`.
bool SamePath(const std::string& a, const std::string& b)
{
    const std::string x = NormalPath(a);
    const std::string y = NormalPath(b);
    const auto tailOf = [](const std::string& longer, const std::string& shorter)
    {
        return longer.size() > shorter.size() && !shorter.empty() && shorter[0] != '/' &&
               longer.compare(longer.size() - shorter.size(), shorter.size(), shorter) == 0 &&
               longer[longer.size() - shorter.size() - 1] == '/';
    };
    return x == y || tailOf(x, y) || tailOf(y, x);
}

/// Whether the command's items \p wanted hold \p item: the same word, or for an item
/// whose value is a path ("--config=a/b.json", a lone "data/train.bin"), the same flag
/// with a path that names the same file (SamePath).
bool Holds(const std::set<std::string>& wanted, const std::string& item)
{
    if (wanted.count(item))
    {
        return true;
    }
    // "--flag=value" -> ("--flag=", "value"); a lone word -> ("", word)
    const auto split = [](const std::string& x)
    {
        const auto eq = x.rfind('-', 0) == 0 ? x.find('=') : std::string::npos;
        return eq == std::string::npos ? std::make_pair(std::string(), x)
                                       : std::make_pair(x.substr(0, eq + 1), x.substr(eq + 1));
    };
    const auto mine = split(item);
    return std::any_of(wanted.begin(), wanted.end(),
                       [&](const std::string& w)
                       {
                           const auto theirs = split(w);
                           const bool aPath = mine.second.find('/') != std::string::npos ||
                                              theirs.second.find('/') != std::string::npos;
                           return aPath && theirs.first == mine.first &&
                                  SamePath(mine.second, theirs.second);
                       });
}

/// How like \p wanted (the simulated command's items) a recording's \p items are: the
/// items they share, less the recording's items the command does not have (an option
/// the recording ran with changes the code that ran: `--attention auto` picks other
/// kernels and other host paths). Iteration counts do not count either way.
long Similarity(const std::set<std::string>& items, const std::set<std::string>& wanted)
{
    long score = 0;
    for (const auto& x : items)
    {
        if (!CountsIterations(x))
        {
            score += Holds(wanted, x) ? 1 : -1;
        }
    }
    return score;
}

/// Whether recording \p r gave the program every argument in \p wanted (iteration
/// counts aside).
bool GivesEvery(const profile::ProfileReader::Run& r, const std::set<std::string>& wanted)
{
    const auto items = ArgumentItems(profile::ProgramArguments(r.command));
    return std::all_of(wanted.begin(), wanted.end(),
                       [&](const std::string& x)
                       { return CountsIterations(x) || Holds(items, x); });
}

double Median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

HostTimeProfile HostTimeProfile::Prepare(const profile::ProfileReader* profile,
                                         const std::vector<std::string>& command, int ranks,
                                         const CpuSpec& cpu, host_time::ReadbackMode readback)
{
    HostTimeProfile p;
    p.readbackMode = readback;
    p.measuredByChoice = cpu.hostTime == HostTimeMode::Measured;
    std::unique_ptr<profile::ProfileReader> modelProfile;
    if (!profile && !cpu.hostModel.empty() && cpu.hostTime != HostTimeMode::Measured)
    {
        modelProfile = std::make_unique<profile::ProfileReader>(cpu.hostModel);
        profile = modelProfile.get();
    }
    std::vector<double> speeds;
    // The median host speed of every run: the host the model's gaps are scaled to, and the
    // recording host's speed when the program's own runs do not say it.
    const double referenceHostNs = profile ? profile::ReferenceHostNs(*profile) : 0.0;
    if (profile)
    {
        // The program's own recordings that hold host time; of those, the ones given the
        // arguments most like the simulated command's (Similarity) run the code most like
        // it (a one-GPU recording of the same script, mode and sizes; the step count may
        // differ), so only they make the table.
        // Among those, the runs launched at the world size nearest the simulated one (by
        // ratio; a tie goes to the larger): one rank never runs what N ranks add between
        // their calls (FSDP's all-gather copy-in/out, the process group's work objects), so
        // a recording at world size 2 stands for 4 ranks better than one at 1.
        const std::string program = profile::ProgramName(command);
        const auto wanted = ArgumentItems(profile::ProgramArguments(command));
        using Preference = std::tuple<long, double, int>; // similarity, -|log2 ratio|, ranks
        std::map<Preference, std::vector<std::string>> bySimilarity;
        for (const auto& [run, r] : profile->Runs())
        {
            if (r.program != program || program.empty())
            {
                continue;
            }
            if (r.hostSpeedNs)
            {
                speeds.push_back(*r.hostSpeedNs);
            }
            if (cpu.hostTime == HostTimeMode::Recorded && r.hostGaps)
            {
                const auto items = ArgumentItems(profile::ProgramArguments(r.command));
                const double distance =
                    std::abs(std::log2(static_cast<double>(r.ranks) / std::max(ranks, 1)));
                bySimilarity[{Similarity(items, wanted), -distance, r.ranks}].push_back(run);
            }
        }
        if (!bySimilarity.empty())
        {
            const auto& runs = bySimilarity.rbegin()->second;
            const auto sequences = profile->HostSequences(runs);
            const auto table = host_time::GapTable::Build(
                sequences,
                cpu.hostGapMean ? host_time::GapStatistic::Mean : host_time::GapStatistic::Median);
            p.origin = HostTimeOrigin::Recording;
            p.table = table.Serialize();
            p.keys = table.Keys();
            const auto reads = host_time::ReadbackTable::Build(sequences);
            const auto served = reads.Filtered(readback);
            p.readbacks = served.Serialize();
            p.recordedReads = reads.Reads();
            p.readbackKeys = served.Keys();
            p.runs = runs;
            p.recordedRanks = std::get<2>(bySimilarity.rbegin()->first);
            p.sameArguments = std::all_of(runs.begin(), runs.end(),
                                          [&](const std::string& run)
                                          { return GivesEvery(profile->Runs().at(run), wanted); });
            for (const auto& s : sequences)
            {
                p.gaps += s.labels.size();
            }
        }
    }
    // Another program's recordings still tell how fast the recording host was.
    const double recordingHostNs = speeds.empty() ? referenceHostNs : Median(speeds);
    if (cpu.localScale)
    {
        p.localScale = *cpu.localScale;
        p.localScaleSource = "scenario";
    }
    else if (recordingHostNs > 0)
    {
        p.recordingHostNs = recordingHostNs;
        p.localHostNs = host_time::MeasureHostSpeedNs();
        p.localScale = p.recordingHostNs / p.localHostNs;
        p.localScaleSource = "measured";
    }
    if (profile && p.table.empty() && cpu.hostTime != HostTimeMode::Measured)
    {
        p.LearnModel(*profile, cpu, referenceHostNs);
    }
    return p;
}

void HostTimeProfile::LearnModel(const profile::ProfileReader& profile, const CpuSpec& cpu,
                                 double referenceHostNs)
{
    auto learned = profile::LearnHostModel(
        profile, cpu.hostGapMean ? host_time::GapStatistic::Mean : host_time::GapStatistic::Median,
        referenceHostNs);
    if (learned.table.Empty())
    {
        return;
    }
    origin = HostTimeOrigin::Model;
    table = learned.table.Serialize();
    keys = learned.table.Keys();
    gaps = learned.gaps;
    modelPrograms = learned.programs;
    modelRuns = learned.runs;
    modelFile = profile.File().filename().string();
}

std::string HostTimeProfile::BySource(const Charged& charged)
{
    constexpr auto kMeasured = static_cast<std::size_t>(host_time::Source::Measured);
    uint64_t all = 0;
    for (const uint64_t n : charged.gaps)
    {
        all += n;
    }
    std::string bySource;
    for (std::size_t i = 0; i < kMeasured; ++i)
    {
        if (charged.gaps[i] > 0)
        {
            bySource +=
                fmt::format("{}{:.1f}% {}", bySource.empty() ? "" : ", ",
                            100.0 * static_cast<double>(charged.gaps[i]) / static_cast<double>(all),
                            host_time::SourceName(static_cast<host_time::Source>(i)));
        }
    }
    return bySource.empty() ? "" : " (" + bySource + ")";
}

std::string HostTimeProfile::Describe(const Charged& charged) const
{
    if (origin == HostTimeOrigin::Measured)
    {
        return std::string("host time: measured on this machine (") +
               (measuredByChoice ? "[cpu] host_time = \"measured\")"
                                 : "no profile holds a recording to learn the host-time model "
                                   "from: name one in [kernels] profile or [cpu] host_model)") +
               fmt::format("; this machine's CPU time x {:.3f}", localScale) + ScaleOrigin();
    }
    std::string line =
        origin == HostTimeOrigin::Recording
            ? fmt::format("host time: recorded ({} run{}{}, at world size {}, {} gaps);",
                          runs.size(), runs.size() == 1 ? "" : "s",
                          sameArguments ? " with the same arguments"
                                        : " with the arguments most like these",
                          recordedRanks, gaps)
            : fmt::format("host time: model of {} recorded program{} ({} runs, {} gaps in {}; "
                          "none of this program), {} keys;",
                          modelPrograms, modelPrograms == 1 ? "" : "s", modelRuns, gaps, modelFile,
                          keys);
    constexpr auto kMeasured = static_cast<std::size_t>(host_time::Source::Measured);
    uint64_t all = 0;
    int64_t allNs = 0;
    for (std::size_t i = 0; i < charged.gaps.size(); ++i)
    {
        all += charged.gaps[i];
        allNs += charged.ns[i];
    }
    const uint64_t known = all - charged.gaps[kMeasured];
    line += fmt::format(" {} of {} gaps charged from it", known, all) + BySource(charged);
    if (const uint64_t n = charged.gaps[kMeasured]; n > 0)
    {
        // Often one gap: a rank's start-up (building the model or the optimizer on the CPU)
        // after its first GPU call, which no step pays; or gaps far past their budget.
        line +=
            fmt::format("; {} gap{} measured here, {:.1f} ms ({:.1f}% of the host time charged)", n,
                        n == 1 ? "" : "s", static_cast<double>(charged.ns[kMeasured]) / 1e6,
                        allNs > 0 ? 100.0 * static_cast<double>(charged.ns[kMeasured]) /
                                        static_cast<double>(allNs)
                                  : 0.0);
    }
    return line + fmt::format("; this machine's CPU time x {:.3f}", localScale) + ScaleOrigin();
}

std::string HostTimeProfile::DescribeReadbacks(const Charged& charged) const
{
    const char* mode = readbackMode == host_time::ReadbackMode::Zeros   ? "zeros"
                       : readbackMode == host_time::ReadbackMode::Float ? "float"
                                                                        : "all";
    const uint64_t reads = charged.readbacksServed + charged.readbacksZeros;
    if (recordedReads == 0)
    {
        return fmt::format("read-backs: the recording holds no read-back values; {} small "
                           "device-to-host read{} the program's own values did not cover "
                           "read zeros",
                           reads, reads == 1 ? "" : "s");
    }
    return fmt::format("read-backs ([workload] readback = \"{}\"): {} of {} small device-to-host "
                       "reads the program's own values did not cover returned the recorded "
                       "value, {} read zeros ({} keys served, from {} recorded reads)",
                       mode, charged.readbacksServed, reads, charged.readbacksZeros, readbackKeys,
                       recordedReads);
}

std::string HostTimeProfile::ScaleOrigin() const
{
    if (localScaleSource == "measured")
    {
        return fmt::format(" (host speed: recording host {:.0f} ns, here {:.0f} ns)",
                           recordingHostNs, localHostNs);
    }
    return localScaleSource == "scenario" ? " ([cpu] local_scale)" : "";
}

} // namespace phantora
