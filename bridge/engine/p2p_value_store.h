// The bytes small NCCL sends carried (wire::P2POp::values), kept until the matching
// receive's rank reads them (wire::P2PValues).  PyTorch's pipeline schedules exchange
// tensor shapes over send/recv (send_object_list: a size tensor, then pickled bytes);
// kernels compute nothing here, so the receiver must get the sender's real bytes.
#pragma once

#include "protocol/messages.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace phantora
{

class P2PValueStore
{
public:
    /// Communicator rank \p from's send \p sequence (among its sends to \p to on \p comm)
    /// carried \p values.
    void Offer(uint64_t comm, int from, int to, uint64_t sequence, std::string values);
    /// The bytes of that send for its receiver, once (unknown when it carried none).
    wire::CollectiveResult Take(uint64_t comm, int from, int to, uint64_t sequence);

private:
    std::map<std::tuple<uint64_t, int, int, uint64_t>, std::string> m_values;
};

} // namespace phantora
