// The error the communicator registry and the collective and send/recv matchers raise.
#pragma once

#include <stdexcept>

namespace phantora
{

/// The program used NCCL in a way that would hang or fail on a real cluster.
class CollectiveError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace phantora
