// The end of a rank that called an entry point the simulator does not implement.
#pragma once

namespace phantora::interposer
{

/// Prints which function was called and exits the rank with a distinct status,
/// so that phantora-cluster reports the rank, the call and the reason.
[[noreturn]] void Unimplemented(const char* function);

} // namespace phantora::interposer
