// The one error the engine and its parts raise when the simulation cannot go on.
#pragma once

#include <stdexcept>

namespace phantora
{

/// The simulation cannot go on (deadlock, misuse of NCCL, a bad request).
class SimulationError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace phantora
