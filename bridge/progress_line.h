// A line of progress for long runs: simulated time reached, training steps rank 0 has
// logged, wall time and ranks alive, printed on stderr at a steady wall-clock interval.
// A 64-rank run can take minutes before the ranks' own output arrives; this says it is
// moving. Off by default when stderr is not a terminal (logs and CI stay as they were).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <regex>
#include <string>

namespace phantora
{

class ProgressLine
{
public:
    /// \p out: where lines go; \p interval: wall time between them.
    ProgressLine(std::FILE* out, std::chrono::milliseconds interval);

    /// Whether "auto" means on: \p fd is a terminal.
    static bool IsTerminal(std::FILE* f);

    /// A line a rank printed: rank 0's lines that name a step ("step 12", "iter 3/100",
    /// "iteration: 7") count as steps.
    void OnRankLine(int rank, const std::string& line);

    /// Prints a line if the interval has passed since the last one (or since the start).
    void Tick(int64_t simulatedNs, int ranksAlive, int ranks);

    /// The line as it would be printed now (for tests and the final line).
    std::string Format(int64_t simulatedNs, int ranksAlive, int ranks) const;

    uint64_t Steps() const { return m_steps; }
    uint64_t LinesPrinted() const { return m_printed; }

    /// Whether \p line names a training step (the rule OnRankLine counts by).
    static bool IsStepLine(const std::string& line);

private:
    std::FILE* m_out;
    std::chrono::milliseconds m_interval;
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_last;
    uint64_t m_steps{0};
    uint64_t m_printed{0};
};

} // namespace phantora
