#include "progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

namespace phantora
{

ProgressLine::ProgressLine(std::FILE* out, std::chrono::milliseconds interval)
    : m_out(out), m_interval(interval), m_start(std::chrono::steady_clock::now()),
      m_last(m_start)
{
}

bool ProgressLine::IsTerminal(std::FILE* f)
{
    return ::isatty(::fileno(f)) == 1;
}

bool ProgressLine::IsStepLine(const std::string& line)
{
    // "step 12", "Step: 12", "iter 3/100", "iteration 7", "[step 5]"; not "steps=10" alone
    // in a summary ("3 steps") nor "step time" without a number.
    static const std::regex kStep(R"((^|[^A-Za-z])(step|iter|iteration)\s*[:#=]?\s*\d+)",
                                  std::regex::icase | std::regex::optimize);
    return std::regex_search(line, kStep);
}

void ProgressLine::OnRankLine(int rank, const std::string& line)
{
    if (rank == 0 && IsStepLine(line))
    {
        ++m_steps;
    }
}

std::string ProgressLine::Format(int64_t simulatedNs, int ranksAlive, int ranks) const
{
    const auto wall = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::steady_clock::now() - m_start)
                          .count();
    return fmt::format("phantora-cluster: simulated {:.6f} s | {} steps (rank 0) | wall "
                       "{}:{:02}:{:02} | {}/{} ranks alive",
                       static_cast<double>(simulatedNs) / 1e9, m_steps, wall / 3600,
                       wall / 60 % 60, wall % 60, ranksAlive, ranks);
}

void ProgressLine::Tick(int64_t simulatedNs, int ranksAlive, int ranks)
{
    const auto now = std::chrono::steady_clock::now();
    if (now - m_last < m_interval)
    {
        return;
    }
    m_last = now;
    ++m_printed;
    std::fprintf(m_out, "%s\n", Format(simulatedNs, ranksAlive, ranks).c_str());
    std::fflush(m_out);
}

} // namespace phantora
