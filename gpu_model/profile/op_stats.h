// What the profile keeps about one op's measured durations.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace phantora::profile
{

struct OpStats
{
    int64_t samples{0};
    double medianNs{0};
    double p10Ns{0};
    double p90Ns{0};
    double meanNs{0};
    double stddevNs{0};
    std::string source; ///< "record" or "replay"
    /// The median of the samples of each recorded program (the runs table), where the
    /// profile names the programs its runs measured.
    std::map<std::string, double> medianByProgramNs;

    /// The median of the samples launched with each set of arguments (kernel_params.h
    /// ArgFacts), where the recorder knew the kernel's parameters.
    std::map<std::string, double> medianByArgsNs;

    /// The median of the samples launched with \p args; null if none were (or \p args
    /// is empty).
    const double* ArgsMedian(const std::string& args) const
    {
        auto it = args.empty() ? medianByArgsNs.end() : medianByArgsNs.find(args);
        return it == medianByArgsNs.end() ? nullptr : &it->second;
    }
    /// The median of \p program's own samples; null if it has none (or \p program is empty).
    const double* ProgramMedian(const std::string& program) const
    {
        auto it = program.empty() ? medianByProgramNs.end() : medianByProgramNs.find(program);
        return it == medianByProgramNs.end() ? nullptr : &it->second;
    }
    /// The median of \p program's own samples if it has some, else of all samples.
    double MedianFor(const std::string& program) const
    {
        const double* own = ProgramMedian(program);
        return own ? *own : medianNs;
    }

    /// The 10th percentile of each recorded program's samples (OnStreamNs).
    std::map<std::string, double> p10ByProgramNs;

    /// What the op takes on a stream the host keeps fed, from \p program's own samples if
    /// it has some, else from all.  A kernel, copy or memset is timed by itself (CUPTI):
    /// its median.  A library call (\p librarySpan: a cuBLAS or cuDNN call, recorded from
    /// its first kernel's start to its last one's end) also spans whatever host time the
    /// recorder took between the call's own launches once the GPU had caught up, which
    /// only ever adds: its 10th percentile is the call with the host ahead.  Measured on a
    /// held H200 step (bench/accuracy/README.md, "Library calls timed whole"): the
    /// cuDNN attention calls 3.02-3.04 ms a step against 3.06 at the 10th percentile and
    /// 3.55 at the median.
    double OnStreamNs(const std::string& program, bool librarySpan) const
    {
        const double* own = ProgramOnStream(program, librarySpan);
        return own ? *own : librarySpan ? p10Ns : medianNs;
    }
    /// OnStreamNs from \p program's own samples; null if it has none (or \p program is
    /// empty).
    const double* ProgramOnStream(const std::string& program, bool librarySpan) const
    {
        const auto& byProgram = librarySpan ? p10ByProgramNs : medianByProgramNs;
        auto it = program.empty() ? byProgram.end() : byProgram.find(program);
        return it == byProgram.end() ? nullptr : &it->second;
    }

    /// Order statistics of \p durationsNs (linear interpolation between ranks).
    static OpStats FromSamples(std::vector<int64_t> durationsNs, std::string source);
};

} // namespace phantora::profile
