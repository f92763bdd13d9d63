// phantora-rank's side of a served run: it stays the parent of its command (a rank,
// or a launcher of ranks such as torchrun) and keeps the bridge told.  A Watch every
// second says the host is alive; the last one says how the command ended, so that
// the bridge can end the run naming a rank that was killed instead of waiting for it
// forever.  The other way round, a bridge that ends the run badly, or stops
// answering, makes it stop the command: its ranks would wait for answers that never
// come.
#pragma once

#include "protocol/curve_keys.h"

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>

namespace phantora
{

class CommandWatch
{
public:
    struct Options
    {
        std::string endpoint; ///< the bridge (phantora-cluster --listen)
        std::optional<wire::CurveKeys> curve;
        std::string id; ///< "HOST:PID", given to the ranks as PHANTORA_SUPERVISOR
        int rank{-1};   ///< the rank the command is, when the launcher says so
        /// How long the bridge may stay silent before the command is stopped.
        std::chrono::seconds bridgeTimeout{60};
    };

    explicit CommandWatch(Options options);

    /// Watches \p child (the leader of its own process group, running \p command)
    /// until it ends, or until the run fails or the bridge is lost (the group is then
    /// stopped).  Returns phantora-rank's exit status: the command's (128 + signal for
    /// a signal), 1 after a failed run, 86 when the bridge was lost.
    int Run(pid_t child, const std::string& command);

    /// "exited with status 3", "was killed by signal 9 (Killed)".
    static std::string DescribeStatus(int status);

private:
    /// Stops the group of \p child: SIGTERM, then SIGKILL after a few seconds.
    static void StopGroup(pid_t child);

    Options m_options;
};

} // namespace phantora
