// Runs the gpu_profiler tool as a user does, for the tests of its subcommands that change
// profile files (forget-host-time, leave-out).
#pragma once

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace phantora::test
{

struct ToolResult
{
    int rc{-1};
    std::string output; ///< stdout and stderr together
};

/// gpu_profiler (PHANTORA_GPU_PROFILER) with \p args (words without spaces or quotes).
inline ToolResult GpuProfiler(const std::string& args)
{
    const std::string cmd = std::string(PHANTORA_GPU_PROFILER) + " " + args + " 2>&1";
    ToolResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p)
    {
        return r;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    {
        r.output.append(buf, n);
    }
    const int status = pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

} // namespace phantora::test
