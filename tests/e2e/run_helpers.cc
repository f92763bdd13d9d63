#include "run_helpers.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <dirent.h>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace phantora::test
{

std::vector<int> ProcessesWithEnvironment(const std::vector<std::string>& needles)
{
    std::vector<int> pids;
    DIR* proc = opendir("/proc");
    if (!proc)
    {
        return pids;
    }
    while (dirent* e = readdir(proc))
    {
        const int pid = std::atoi(e->d_name);
        if (pid <= 0)
        {
            continue;
        }
        std::ifstream in(fmt::format("/proc/{}/environ", pid), std::ios::binary);
        std::stringstream env;
        env << in.rdbuf();
        std::string text = env.str();
        for (char& c : text)
        {
            c = c == '\0' ? '\n' : c;
        }
        text = "\n" + text;
        bool all = !env.str().empty();
        for (const auto& n : needles)
        {
            all = all && text.find("\n" + n + "\n") != std::string::npos;
        }
        // a zombie has an empty environ: it is not "left behind" as a running process
        if (all)
        {
            pids.push_back(pid);
        }
    }
    closedir(proc);
    return pids;
}

CommandResult RunCommand(const std::string& command)
{
    CommandResult r;
    const std::string full = command + " 2>&1";
    FILE* pipe = popen(full.c_str(), "r");
    if (!pipe)
    {
        return r;
    }
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0)
    {
        r.output.append(buf.data(), n);
    }
    const int status = pclose(pipe);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

std::filesystem::path ScratchDir()
{
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "." + info->name();
    for (char& c : name)
    {
        if (c == '/')
        {
            c = '_';
        }
    }
    const auto dir = std::filesystem::temp_directory_path() /
                     ("phantora-e2e-" + std::to_string(getpid())) / name;
    std::filesystem::create_directories(dir);
    return dir;
}

std::filesystem::path WriteFile(const std::string& name, const std::string& text)
{
    const auto file = ScratchDir() / name;
    std::ofstream(file) << text;
    return file;
}

namespace
{
/// The [topology] table of \p gpus GPUs on one switch of 400 Gb/s, 1 us links.
std::string SwitchTopology(int gpus)
{
    return "[topology]\nkind = \"switch\"\ngpus = " + std::to_string(gpus) +
           "\nlink_bandwidth = \"400Gbps\"\nlink_latency = \"1us\"\n";
}
} // namespace

std::string SwitchScenario(int gpus, const std::string& extra)
{
    return R"(
[gpu]
model = "H200"
memory = "141GiB"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
)" + SwitchTopology(gpus) +
           R"([kernels]
default = "1us"
)" + extra;
}

std::string ProfileOnlyScenario(const std::string& model, const std::filesystem::path& profile)
{
    return R"(
[gpu]
model = ")" +
           model +
           R"("
memory = "80GiB"
hbm_bandwidth = "3.35TB/s"
pcie_bandwidth = "55GB/s"
[cpu]
time_scale = 0.0
)" + SwitchTopology(1) +
           R"([kernels]
default = "1s"
profile = ")" +
           profile.string() + "\"\n";
}

std::string HostTimeScenario(const std::filesystem::path& profile, const std::string& hostTime,
                             const std::string& kernelDefault, const std::string& extra)
{
    return R"(
[gpu]
model = "H200"
memory = "80GiB"
hbm_bandwidth = "4.8TB/s"
pcie_bandwidth = "55GB/s"
launch_latency = "4us"
[cpu]
time_scale = 1.0
host_time = ")" +
           hostTime + "\"\n" + SwitchTopology(1) +
           R"([kernels]
default = ")" +
           kernelDefault +
           R"("
profile = ")" +
           profile.string() + "\"\n" + extra;
}

std::map<std::pair<int, int>, int64_t> StepTimesNs(const std::string& output)
{
    static const std::regex line(R"(\[rank (\d+)\] rank (\d+) step (\d+) time ([0-9.]+) us)");
    std::map<std::pair<int, int>, int64_t> out;
    for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it)
    {
        const int rank = std::stoi((*it)[1]);
        const int step = std::stoi((*it)[3]);
        out[{rank, step}] = std::llround(std::stod((*it)[4]) * 1000.0);
    }
    return out;
}

} // namespace phantora::test
