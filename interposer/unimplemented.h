// The end of a rank that called an entry point the simulator does not implement.
#pragma once

#include <string>

namespace phantora::interposer
{

/// "libfoo.so (function) <- ..." for the frames above the caller's \p skip innermost
/// ones: which library made a call tells the user (and us) what to implement next.
std::string Callers(int skip);

/// Prints which function was called and exits the rank with a distinct status,
/// so that phantora-cluster reports the rank, the call and the reason.
[[noreturn]] void Unimplemented(const char* function);

} // namespace phantora::interposer
