#include "learned_host_model.h"

#include "host_time/host_time_model.h"
#include "program_name.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

namespace phantora::profile
{

namespace
{

bool IsNumber(const std::string& word)
{
    if (word.empty())
    {
        return false;
    }
    char* end = nullptr;
    std::strtod(word.c_str(), &end);
    return end == word.c_str() + word.size();
}

/// The script with the folder it is in, else the program's name.
std::string Script(const ProfileReader::Run& run)
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

std::string ModelProgram(const ProfileReader::Run& run)
{
    std::vector<std::string> words;
    std::istringstream in(ProgramArguments(run.command));
    for (std::string word; in >> word;)
    {
        words.push_back(word);
    }
    std::string identity = Script(run);
    for (std::size_t i = 0; i < words.size(); ++i)
    {
        const std::string& w = words[i];
        const auto eq = w.find('=');
        if (IsNumber(w) ||
            (w.rfind("--", 0) == 0 && eq != std::string::npos && IsNumber(w.substr(eq + 1))))
        {
            continue;
        }
        // An option that takes a number names a size, not a code path: drop it with it.
        if (w.rfind("-", 0) == 0 && i + 1 < words.size() && IsNumber(words[i + 1]))
        {
            ++i;
            continue;
        }
        identity += ' ' + w;
    }
    return identity;
}

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
    LearnOptions options;
    options.model.statistic = statistic;
    return LearnHostModel(profile, options, referenceHostNs, leaveOut);
}

LearnedHostModel LearnHostModel(const ProfileReader& profile, const LearnOptions& options,
                                double referenceHostNs, const std::set<std::string>& leaveOut)
{
    // std::map: the programs, and each program's runs, in name order, so the model is the
    // same whatever order the file lists them in.
    std::map<std::string, std::vector<std::string>> byProgram;
    for (const auto& [run, r] : profile.Runs())
    {
        if (r.hostGaps && !leaveOut.count(options.leaveOutCodePaths ? ModelProgram(r) : r.program))
        {
            byProgram[options.byCodePath ? ModelProgram(r) : Script(r)].push_back(run);
        }
    }
    LearnedHostModel learned;
    host_time::HostTimeModel model(options.model);
    for (const auto& [program, runs] : byProgram)
    {
        host_time::GapSamples samples(host_time::GapSamples::Keys::KindAfterWaits,
                                      options.maxDepth);
        for (const std::string& run : runs)
        {
            const double scale = ToReferenceHost(profile.Runs().at(run), referenceHostNs);
            for (const auto& thread : profile.HostSequences({run}))
            {
                samples.Add(thread, scale, options.steadyOnly ? host_time::SteadyFrom(thread) : 0);
                learned.gaps += thread.labels.size();
            }
            ++learned.runs;
        }
        model.AddProgram(samples, runs.size());
    }
    learned.table = model.Build();
    learned.programs = model.Programs();
    return learned;
}

} // namespace phantora::profile
