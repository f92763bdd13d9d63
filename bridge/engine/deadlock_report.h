// Deadlock: every live rank waits and nothing in flight can release it.  Whether that is
// the case, and the message that says who waits for what.
#pragma once

#include "engine/rank_state.h"

#include <string>
#include <vector>

namespace phantora
{

/// Whether no thread of any rank can send anything any more on its own (none runs, none
/// is in a timed host wait, no wake is untaken, every rank connected) while at least one
/// waits for the engine.  Only a deadlock if nothing in flight on the network either.
bool EveryRankWaits(const std::vector<RankState>& ranks);

/// The deadlock message: each waiting thread, the call it waits in and since when,
/// threads blocked in a host wait, ranks that are gone and their last call, then
/// \p open (collectives, transfers and communicators only some members reached).
std::string DeadlockReport(const std::vector<RankState>& ranks,
                           const std::vector<std::string>& open);

/// Every connected rank's threads as the engine sees them (phase, clock, timed-wait
/// deadline, the call a waiting thread is in, untaken wakes): what a stalled run holds
/// simulated time back on.  Printed on SIGUSR1 to phantora-cluster.
std::string LaneStateReport(const std::vector<RankState>& ranks);

} // namespace phantora
