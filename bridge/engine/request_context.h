// One request as the engine's parts see it: who sent it, from which thread, at which
// clock, and where the replies it causes go.  Handed down the call chain rather than
// kept in members, so no part can read a request other than the one it is given.
#pragma once

#include "protocol/messages.h"

#include <cstdint>
#include <vector>

namespace phantora
{

struct OutgoingReply
{
    int rank;
    wire::ReplyEnvelope reply;
    uint32_t lane{0}; ///< the rank's thread that waits for it
};

struct RequestContext
{
    int rank{0};
    uint32_t lane{0};  ///< the thread that sent the request
    int64_t nowNs{0};  ///< that thread's clock, the request's clock applied
    int64_t sentNs{0}; ///< the clock the request carried
    uint64_t seq{0};   ///< the request's number, which the answer to a blocking call carries
    std::vector<OutgoingReply>& out; ///< replies that can be given at once
    bool graphNode{false};           ///< a node of a replayed CUDA graph (wire::RequestEnvelope)
};

} // namespace phantora
