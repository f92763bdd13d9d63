#include "unimplemented.h"

#include "rank_client.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <memory>
#include <string>

namespace phantora::interposer
{

std::string Callers(int skip)
{
    void* frames[16];
    const int n = backtrace(frames, 16);
    std::string out;
    // frame 0 is Callers itself
    for (int i = 1 + skip; i < n && i < 12 + skip; ++i)
    {
        Dl_info info{};
        if (!dladdr(frames[i], &info) || !info.dli_fname)
        {
            continue;
        }
        std::string where = info.dli_fname;
        where = where.substr(where.rfind('/') + 1);
        if (info.dli_sname)
        {
            int status = 0;
            std::unique_ptr<char, decltype(&std::free)> d(
                abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status), &std::free);
            where += " (" + std::string(status == 0 && d ? d.get() : info.dli_sname) + ")";
        }
        out += (out.empty() ? "" : " <- ") + where;
    }
    return out;
}

void Unimplemented(const char* function)
{
    const std::string callers = Callers(2); // Unimplemented and the stub
    Fatal(std::string(function) +
          " is not implemented by the simulator yet; the program called it, so its result "
          "cannot be simulated faithfully" +
          (callers.empty() ? "" : "; called from " + callers));
}

} // namespace phantora::interposer
