#include "estimator_accuracy.h"

#include "gpu_model/kernel_traffic.h"
#include "gpu_model/op_estimator.h"
#include "gpu_model/profile/program_name.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace phantora
{

using profile::OpKey;
using profile::OpStats;

double EstimateCheck::RelativeError() const
{
    if (!estimate || measuredNs <= 0)
    {
        return 0;
    }
    return std::abs(static_cast<double>(estimate->ns) - measuredNs) / measuredNs;
}

namespace
{

/// The launch arguments of an op's typical launch: the set whose median is nearest the
/// op's own ("" when the recorder knew none).
std::string TypicalArgs(const OpStats& s)
{
    std::string best;
    double bestDist = -1;
    for (const auto& [args, median] : s.medianByArgsNs)
    {
        const double d = std::abs(median - s.medianNs);
        if (bestDist < 0 || d < bestDist)
        {
            bestDist = d;
            best = args;
        }
    }
    return best;
}

EstimateCheck Check(const OpEstimator& est, const OpKey& key, double measuredNs, int64_t launches,
                    const std::string& args, const std::string& work = {})
{
    EstimateCheck c;
    c.key = key;
    c.cls = ClassOf(key);
    c.measuredNs = measuredNs;
    c.launches = launches;
    c.estimate = est.Estimate(key, args, work);
    c.candidates = est.Candidates(key, args, work);
    if (const auto t = TrafficOf(key, args))
    {
        c.trafficBytes = t->bytes;
    }
    return c;
}

double Quantile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

} // namespace

std::vector<EstimateCheck> CheckProfile(const profile::ProfileReader& profile, const GpuSpec& gpu,
                                        LeaveOut leave, double minNs)
{
    std::vector<EstimateCheck> out;
    if (leave == LeaveOut::Op)
    {
        const OpKey* current = nullptr;
        const OpEstimator est(&profile, gpu,
                              [&current](const OpEstimator::Entry& e)
                              { return current && e.first == *current; });
        for (const auto& [key, stats] : profile.Ops())
        {
            const double charged = stats.OnStreamNs({}, profile::IsLibraryCall(key.kind));
            if (stats.medianNs < minNs || charged <= 0)
            {
                continue;
            }
            current = &key;
            // a host copy the replay tool measured alone was from pinned memory
            out.push_back(Check(est, key, charged, stats.samples, TypicalArgs(stats),
                                stats.source == "replay" ? "pinned=1" : ""));
        }
        return out;
    }
    std::set<std::string> programs;
    for (const auto& [key, stats] : profile.Ops())
    {
        for (const auto& [program, median] : stats.medianByProgramNs)
        {
            programs.insert(program);
        }
    }
    const std::string* current = nullptr;
    const OpEstimator est(&profile, gpu,
                          [&current](const OpEstimator::Entry& e)
                          { return current && e.second.medianByProgramNs.count(*current) > 0; });
    for (const std::string& program : programs)
    {
        current = &program;
        for (const auto& [key, stats] : profile.Ops())
        {
            const bool span = profile::IsLibraryCall(key.kind);
            const double* own = stats.ProgramOnStream(program, span);
            if (!own || stats.medianNs < minNs || *own <= 0)
            {
                continue;
            }
            out.push_back(Check(est, key, *own, stats.samples, TypicalArgs(stats),
                                program == profile::kReplayProgram ? "pinned=1" : ""));
            out.back().program = program;
        }
    }
    return out;
}

std::vector<EstimateCheck> CheckHeldOut(const profile::ProfileReader& profile, const GpuSpec& gpu,
                                        const std::vector<profile::RawLog>& logs, double minNs)
{
    // One op recorded by several logs: its samples pooled, as an import would.
    std::map<OpKey, std::vector<int64_t>> samples;
    std::map<OpKey, std::map<std::string, std::size_t>> args;
    for (const auto& log : logs)
    {
        for (const auto& [key, durations] : log.samples)
        {
            if (profile.Find(key))
            {
                continue;
            }
            auto& all = samples[key];
            all.insert(all.end(), durations.begin(), durations.end());
            if (auto a = log.sampleArgs.find(key); a != log.sampleArgs.end())
            {
                for (const std::string& s : a->second)
                {
                    ++args[key][s];
                }
            }
        }
    }
    const OpEstimator est(&profile, gpu);
    std::vector<EstimateCheck> out;
    for (auto& [key, durations] : samples)
    {
        const OpStats s = OpStats::FromSamples(durations, "record");
        const double charged = s.OnStreamNs({}, profile::IsLibraryCall(key.kind));
        if (s.medianNs < minNs || charged <= 0)
        {
            continue;
        }
        std::string common;
        std::size_t most = 0;
        for (const auto& [a, n] : args[key])
        {
            if (n > most)
            {
                most = n;
                common = a;
            }
        }
        out.push_back(Check(est, key, charged, s.samples, common));
    }
    return out;
}

std::vector<EstimateCheck> CheckMeasuredElsewhere(const profile::ProfileReader& profile,
                                                  double minNs)
{
    std::vector<EstimateCheck> out;
    for (const auto& [key, stats] : profile.Ops())
    {
        const bool span = profile::IsLibraryCall(key.kind);
        const auto& byProgram = span ? stats.p10ByProgramNs : stats.medianByProgramNs;
        if (byProgram.size() < 2 || stats.medianNs < minNs)
            continue;
        for (const auto& [program, own] : byProgram)
        {
            std::vector<double> others;
            for (const auto& [other, ns] : byProgram)
                if (other != program)
                    others.push_back(ns);
            if (own <= 0)
                continue;
            EstimateCheck c;
            c.key = key;
            c.cls = ClassOf(key);
            c.measuredNs = own;
            c.launches = stats.samples;
            c.estimate = OpCost{std::llround(Quantile(others, 0.5)), CostSource::Measured};
            c.program = program;
            out.push_back(std::move(c));
        }
    }
    return out;
}

std::vector<ClassAccuracy> Summarize(const std::vector<EstimateCheck>& checks)
{
    std::map<OpClass, ClassAccuracy> rows;
    std::map<OpClass, std::vector<double>> errors;
    std::map<OpClass, std::pair<double, double>> time; // estimated, measured
    for (const EstimateCheck& c : checks)
    {
        ClassAccuracy& r = rows[c.cls];
        r.cls = c.cls;
        if (!c.estimate)
        {
            ++r.unestimated;
            continue;
        }
        ++r.n;
        ++r.bySource[static_cast<std::size_t>(c.estimate->source)];
        errors[c.cls].push_back(c.RelativeError());
        time[c.cls].first += static_cast<double>(c.estimate->ns) * static_cast<double>(c.launches);
        time[c.cls].second += c.measuredNs * static_cast<double>(c.launches);
    }
    std::vector<ClassAccuracy> out;
    for (auto& [cls, r] : rows)
    {
        const std::vector<double>& e = errors[cls];
        if (!e.empty())
        {
            r.medianAbsErr = Quantile(e, 0.5);
            r.p90AbsErr = Quantile(e, 0.9);
            double sum = 0;
            for (double x : e)
            {
                sum += x;
            }
            r.meanAbsErr = sum / static_cast<double>(e.size());
            r.timeRatio = time[cls].first / std::max(time[cls].second, 1.0);
        }
        out.push_back(r);
    }
    return out;
}

} // namespace phantora
