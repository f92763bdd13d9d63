// Which requests to the bridge are boundaries of the host-time profile, and what they
// are called there (host_time/host_boundary.h): the same names the recorder gives the
// real calls they stand for.
#pragma once

#include "protocol/messages.h"

#include <optional>
#include <string>

namespace phantora::interposer
{

/// The boundary's name, or nullopt for a request no program call stands behind one to
/// one (a thread hand-over, a collective's values, hello and goodbye).
std::optional<std::string> BoundaryOf(const wire::Request& request);

} // namespace phantora::interposer
