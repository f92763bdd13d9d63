// Answers the threads blocked in the engine (synchronisations, event queries, elapsed
// times, collective results, received bytes) once their answer is final: the timelines
// know it, or, for a query, nothing can complete what it asks about by its caller's clock
// any more.
#pragma once

#include "engine/collective_launch.h"
#include "engine/collective_value_store.h"
#include "engine/commit_policy.h"
#include "engine/communicator_registry.h"
#include "engine/lanes.h"
#include "engine/p2p_value_store.h"
#include "engine/request_context.h"
#include "gpu_model/device_timeline.h"

#include <cstdint>
#include <vector>

namespace phantora
{

/// Whether a query whose record the timelines do not know yet may be answered "not done".
enum class QueryRule
{
    KnownOnly,         ///< no: a rank about to be answered could still complete it
    SettleUnreachable, ///< yes, once nothing can complete it by its caller's clock
};

class WaitAnswers
{
public:
    WaitAnswers(Lanes& lanes, const std::vector<DeviceTimeline>& timelines,
                const CommitPolicy& commit, const CommunicatorRegistry& comms,
                const CollectiveLaunch& launch, CollectiveValueStore& values,
                P2PValueStore& p2pValues);

    /// Answers every waiting thread whose answer is now known.
    void AnswerAll(std::vector<OutgoingReply>& out, QueryRule rule);

private:
    /// Answers a CollectiveValues wait if every member issued the collective.
    void AnswerValues(int rank, uint32_t lane, const PendingWait& w,
                      std::vector<OutgoingReply>& out);
    /// Answers a P2PValues wait if the peer issued the matching send.
    void AnswerP2PValues(int rank, uint32_t lane, const PendingWait& w,
                         std::vector<OutgoingReply>& out);

    Lanes& m_lanes;
    const std::vector<DeviceTimeline>& m_timelines;
    const CommitPolicy& m_commit;
    const CommunicatorRegistry& m_comms;
    const CollectiveLaunch& m_launch;
    CollectiveValueStore& m_values;
    P2PValueStore& m_p2pValues;
};

} // namespace phantora
