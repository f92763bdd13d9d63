#include "learned_host_model.h"

#include "host_time/host_time_model.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

namespace phantora::profile
{

namespace
{

/// The program a run recorded, told apart from others of the same file name by the folder
/// it is in: examples/torch/train_gpt.py, examples/megatron/train_gpt.py and
/// examples/deepspeed/train_gpt.py are three programs (ProgramName calls each
/// "train_gpt.py"), and each counts once in the model.
std::string Identity(const ProfileReader::Run& run)
{
    std::istringstream in(run.command);
    for (std::string word; in >> word;)
    {
        const std::filesystem::path path(word);
        if (path.filename() == run.program && path.has_parent_path())
        {
            return (path.parent_path().filename() / path.filename()).generic_string();
        }
    }
    return run.program;
}

} // namespace

double ReferenceHostNs(const ProfileReader& profile)
{
    std::vector<double> speeds;
    for (const auto& [run, r] : profile.Runs())
    {
        if (r.hostSpeedNs && *r.hostSpeedNs > 0)
        {
            speeds.push_back(*r.hostSpeedNs);
        }
    }
    if (speeds.empty())
    {
        return 0;
    }
    std::sort(speeds.begin(), speeds.end());
    const std::size_t n = speeds.size();
    return n % 2 ? speeds[n / 2] : (speeds[n / 2 - 1] + speeds[n / 2]) / 2;
}

double ToReferenceHost(const ProfileReader::Run& run, double referenceHostNs)
{
    // A run on a slower CPU took longer for the same work: scaled to the reference host,
    // its gaps are the program's, not its host's.
    return referenceHostNs > 0 && run.hostSpeedNs && *run.hostSpeedNs > 0
               ? referenceHostNs / *run.hostSpeedNs
               : 1.0;
}

LearnedHostModel LearnHostModel(const ProfileReader& profile, host_time::GapStatistic statistic,
                                double referenceHostNs, const std::set<std::string>& leaveOut)
{
    // std::map: the programs, and each program's runs, in name order, so the model is the
    // same whatever order the file lists them in.
    std::map<std::string, std::vector<std::string>> byProgram;
    for (const auto& [run, r] : profile.Runs())
    {
        if (r.hostGaps && !leaveOut.count(r.program))
        {
            byProgram[Identity(r)].push_back(run);
        }
    }
    LearnedHostModel learned;
    host_time::HostTimeModel model(statistic);
    for (const auto& [program, runs] : byProgram)
    {
        host_time::GapSamples samples(host_time::GapSamples::Keys::KindAfterWaits);
        for (const std::string& run : runs)
        {
            const double scale = ToReferenceHost(profile.Runs().at(run), referenceHostNs);
            for (const auto& thread : profile.HostSequences({run}))
            {
                samples.Add(thread, scale);
                learned.gaps += thread.labels.size();
            }
            ++learned.runs;
        }
        model.AddProgram(samples);
    }
    learned.table = model.Build();
    learned.programs = model.Programs();
    return learned;
}

} // namespace phantora::profile
