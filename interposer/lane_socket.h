// How long a lane's ZeroMQ socket may hold what it queued once closed (ZMQ_LINGER).
//
// A thread's last requests (a HostEvent Wake for its joiner, then Exit) are queued on
// its lane's socket, and the socket is closed as the thread ends.  When the bridge is
// behind, those requests wait in the rank's ZeroMQ queue behind the lane's earlier ones;
// a finite linger throws them away once it expires (2 s had been used), and the bridge,
// which hands a rank's requests over in order, then waits for their order numbers
// forever.  The rank's own context is never terminated (rank_client.h), so a lane's
// socket lingers for as long as delivery takes and nothing waits for it.  The goodbye's
// context is terminated as the rank ends: its linger must be finite, and the bridge has
// answered that socket's hello (all earlier requests handled) just before.
#pragma once

namespace phantora::interposer
{

/// ZMQ_LINGER of a lane's socket: until delivered (-1).
inline constexpr int kLaneLingerMs = -1;
/// ZMQ_LINGER of the goodbye's socket, whose context is closed while the rank exits.
inline constexpr int kFarewellLingerMs = 2000;

} // namespace phantora::interposer
