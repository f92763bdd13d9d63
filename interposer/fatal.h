// Ends the rank with a message naming the interposer and the process: the one way out of
// a state the simulation cannot answer (a real runtime would have failed or hung there).
#pragma once

#include <string>

namespace phantora::interposer
{

[[noreturn]] void Fatal(const std::string& message);

} // namespace phantora::interposer
