#include "host_time_profile.h"

#include "host_gap_table.h"
#include "host_speed.h"
#include "program_name.h"

#include <algorithm>

namespace phantora
{

namespace
{

double Median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

HostTimeProfile HostTimeProfile::Prepare(const profile::ProfileReader* profile,
                                         const std::vector<std::string>& command,
                                         const CpuSpec& cpu)
{
    HostTimeProfile p;
    std::vector<double> speeds;
    if (profile)
    {
        // The program's own recordings; of those, the ones given the same arguments run
        // the same code as the simulation (a one-GPU recording of the same script and
        // flags), so they are preferred over the program's other modes or sizes.
        const std::string program = profile::ProgramName(command);
        const std::string arguments = profile::ProgramArguments(command);
        std::vector<std::string> same, other;
        for (const auto& [run, r] : profile->Runs())
        {
            if (r.program != program || program.empty())
            {
                continue;
            }
            (profile::ProgramArguments(r.command) == arguments ? same : other).push_back(run);
            if (r.hostSpeedNs)
            {
                speeds.push_back(*r.hostSpeedNs);
            }
        }
        if (cpu.recordedHostTime)
        {
            for (const auto* runs : {&same, &other})
            {
                auto sequences = profile->HostSequences(*runs);
                if (sequences.empty())
                {
                    continue;
                }
                const auto table = host_time::GapTable::Build(sequences);
                p.table = table.Serialize();
                p.keys = table.Keys();
                p.runs = *runs;
                p.sameArguments = runs == &same;
                for (const auto& s : sequences)
                {
                    p.gaps += s.labels.size();
                }
                break;
            }
        }
        if (speeds.empty())
        {
            // Another program's recordings still tell how fast the recording host was.
            for (const auto& [run, r] : profile->Runs())
            {
                if (r.hostSpeedNs)
                {
                    speeds.push_back(*r.hostSpeedNs);
                }
            }
        }
    }
    if (cpu.localScale)
    {
        p.localScale = *cpu.localScale;
        p.localScaleSource = "scenario";
    }
    else if (!speeds.empty())
    {
        p.recordingHostNs = Median(speeds);
        p.localHostNs = host_time::MeasureHostSpeedNs();
        p.localScale = p.recordingHostNs / p.localHostNs;
        p.localScaleSource = "measured";
    }
    return p;
}

} // namespace phantora
