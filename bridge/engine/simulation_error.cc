#include "engine/simulation_error.h"

namespace phantora
{

const char* RunEndName(RunEnd end)
{
    switch (end)
    {
    case RunEnd::Completed:
        return "completed";
    case RunEnd::Error:
        return "error";
    case RunEnd::RankFailed:
        return "rank_failed";
    case RunEnd::Deadlock:
        return "deadlock";
    case RunEnd::Timeout:
        return "timeout";
    case RunEnd::Interrupted:
        return "interrupted";
    }
    return "error";
}

int ExitStatus(RunEnd end, int signal)
{
    switch (end)
    {
    case RunEnd::Completed:
        return 0;
    case RunEnd::Error:
        return 1;
    case RunEnd::RankFailed:
        return 3;
    case RunEnd::Deadlock:
        return 4;
    case RunEnd::Timeout:
        return 5;
    case RunEnd::Interrupted:
        return 128 + (signal > 0 ? signal : 15);
    }
    return 1;
}

} // namespace phantora
