#include "unimplemented.h"

#include "rank_client.h"

#include <string>

namespace phantora::interposer
{

void Unimplemented(const char* function)
{
    Fatal(std::string(function) +
          " is not implemented by the simulator yet; the program called it, so its result "
          "cannot be simulated faithfully");
}

} // namespace phantora::interposer
