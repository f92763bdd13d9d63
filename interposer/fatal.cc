#include "fatal.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace phantora::interposer
{

void Fatal(const std::string& message)
{
    std::fprintf(stderr, "phantora interposer (pid %d): %s\n", getpid(), message.c_str());
    std::fflush(stderr);
    std::_Exit(86);
}

} // namespace phantora::interposer
