// libphantora_rank_fork.so: phantora-rank preloads it (before the interposer) into the
// processes its command starts.  In a rank's interpreter it forks the rank from this
// host's fork server and never returns (RankForkRelay); everywhere else it does nothing.
#include "rank_fork_relay.h"

namespace
{

__attribute__((constructor)) void RelayToTheForkServer()
{
    if (auto relay = phantora::RankForkRelay::ForThisProcess())
    {
        relay->Run();
    }
}

} // namespace
