// Threads of the interposer itself (defined in thread_handoff.cc): not the program's,
// so they have no lane, no simulated clock the bridge sees, and their waits are real.
#pragma once

namespace phantora::interposer
{

/// Starts a detached interposer thread running \p start(\p arg).
void StartInternalThread(void* (*start)(void*), void* arg);

} // namespace phantora::interposer
