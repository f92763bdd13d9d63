// The one error the engine and its parts raise when the simulation cannot go on.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace phantora
{

/// How a run ended: the report says it, and phantora-cluster's exit status
/// (ExitStatus) tells a script which end it was without reading the report.
enum class RunEnd : uint8_t
{
    Completed,   ///< every rank exited cleanly
    Error,       ///< the simulation could not go on (misuse of NCCL, a bad request, ...)
    RankFailed,  ///< a rank crashed, exited non-zero, or its host went silent
    Deadlock,    ///< no rank could make progress
    Timeout,     ///< ranks did not connect, or a request never came, in time
    Interrupted, ///< SIGINT or SIGTERM
};

/// "completed", "error", "rank_failed", "deadlock", "timeout", "interrupted".
const char* RunEndName(RunEnd end);

/// phantora-cluster's exit status for a run that ended so: 0, 1, 3, 4, 5, and 128 plus
/// the signal's number for an interrupted run (130 for SIGINT, 143 for SIGTERM), as a
/// shell reports a process a signal ended.  2 is left to a usage error.
int ExitStatus(RunEnd end, int signal);

/// The simulation cannot go on (deadlock, misuse of NCCL, a bad request).
class SimulationError : public std::runtime_error
{
public:
    explicit SimulationError(const std::string& what, RunEnd end = RunEnd::Error, int signal = 0)
        : std::runtime_error(what), m_end(end), m_signal(signal)
    {
    }
    RunEnd End() const { return m_end; }
    /// The signal that interrupted the run (RunEnd::Interrupted), else 0.
    int Signal() const { return m_signal; }

private:
    RunEnd m_end;
    int m_signal;
};

} // namespace phantora
