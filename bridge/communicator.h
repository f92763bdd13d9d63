// An NCCL communicator as the bridge sees it: which ranks belong, in which order.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace phantora
{

/// The program used NCCL in a way that would hang or fail on a real cluster.
class CollectiveError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

struct Communicator
{
    uint64_t handle{0};
    std::vector<int> ranks; ///< communicator rank -> global rank
};

} // namespace phantora
