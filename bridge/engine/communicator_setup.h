// Communicator creation (ncclCommInitRank, ncclCommSplit) as the ranks' threads see it:
// each creating thread blocks until the last member has arrived, and all leave together
// with their own communicator (or none), its NCCL settings fixed.
#pragma once

#include "engine/communicator_registry.h"
#include "engine/lanes.h"
#include "engine/nccl_settings.h"
#include "engine/request_context.h"
#include "protocol/messages.h"

#include <utility>
#include <vector>

namespace phantora
{

class CommunicatorSetup
{
public:
    CommunicatorSetup(CommunicatorRegistry& comms, NcclSettings& nccl, Lanes& lanes);

    void OnCommInit(const RequestContext& ctx, const wire::NcclCommInit& m);
    void OnCommSplit(const RequestContext& ctx, const wire::NcclCommSplit& m);
    /// Folded: completes the inits only live members and their replicas make up, once
    /// nothing else can move (CommunicatorRegistry::ResolveFolded).  Whether any was.
    bool ResolveFolded(std::vector<OutgoingReply>& out);

private:
    void Joined(const CommunicatorRegistry::Joined& joined, std::vector<OutgoingReply>& out);
    /// Ends the creation of communicators: each member gets its own (or none).
    void LeaveTogether(const std::vector<std::pair<int, const Communicator*>>& members,
                       std::vector<OutgoingReply>& out);

    CommunicatorRegistry& m_comms;
    NcclSettings& m_nccl;
    Lanes& m_lanes;
};

} // namespace phantora
