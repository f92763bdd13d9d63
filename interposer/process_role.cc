#include "process_role.h"

#include "fatal.h"
#include "protocol/device_description.h"
#include "rank_client.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <unistd.h>

namespace phantora::interposer
{

namespace
{

constexpr const char* kClaim = "PHANTORA_RANK_PID";
constexpr const char* kGpu = "PHANTORA_GPU";

/// Where a rank that got no PHANTORA_GPU from a launcher (phantora-rank's) leaves its
/// Welcome's description for the processes it starts with an environment copied before it
/// connected (Python's os.environ, which Inductor's compile workers get).
std::string DescriptionFile(int claimant)
{
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/phantora-gpu-" + std::to_string(getuid()) +
           "-" + std::to_string(claimant);
}

/// Set when this process wrote DescriptionFile (removed at exit).
bool g_wroteDescription = false;

} // namespace

void ProcessRole::ClaimAtLoad()
{
    const char* claim = std::getenv(kClaim);
    if ((claim && *claim) || !RankClient::Configured() || RankClient::IsServedLauncher() ||
        RankClient::IsForkServer())
    {
        return;
    }
    setenv(kClaim, std::to_string(getpid()).c_str(), 1);
}

int ProcessRole::Claimant()
{
    const char* claim = std::getenv(kClaim);
    return claim && *claim ? std::atoi(claim) : 0;
}

bool ProcessRole::IsHelper()
{
    if (RankClient::IfConnected())
    {
        return false;
    }
    const int claimant = Claimant();
    return claimant != 0 && claimant != getpid();
}

bool ProcessRole::AnswersLocally()
{
    if (RankClient::IsForkServer())
    {
        const char* gpu = std::getenv(kGpu);
        return gpu && *gpu;
    }
    return IsHelper();
}

const wire::Welcome& ProcessRole::LocalDevice(const char* call)
{
    // Read once per process image; a forked child reads the same variable.
    static std::once_flag once;
    static std::optional<wire::Welcome> device;
    static std::string error;
    std::call_once(once,
                   []
                   {
                       std::string text;
                       if (const char* gpu = std::getenv(kGpu); gpu && *gpu)
                       {
                           text = gpu;
                       }
                       else if (const int claimant = Claimant(); claimant != 0)
                       {
                           std::ifstream in(DescriptionFile(claimant));
                           std::getline(in, text);
                       }
                       if (text.empty())
                       {
                           error = std::string(kGpu) + " is not set, and the rank left no " +
                                   DescriptionFile(Claimant());
                           return;
                       }
                       try
                       {
                           device = wire::DecodeDeviceDescription(text);
                       }
                       catch (const std::exception& e)
                       {
                           error = std::string(kGpu) + ": " + e.what();
                       }
                   });
    if (!device)
    {
        Fatal("pid " + std::to_string(getpid()) + " (" + CommandLine() + "), a process rank " +
              (std::getenv("RANK") ? std::getenv("RANK") : "0") + " started, asked " + call +
              " for the simulated GPU, which processes that are no rank answer from the "
              "launcher's description of it, and " +
              error +
              " (phantora-cluster sets it; under phantora-rank the rank leaves it at its "
              "first CUDA call, so a process it starts before that cannot ask)");
    }
    return *device;
}

void ProcessRole::OnConnected(const wire::Welcome& welcome)
{
    setenv(kClaim, std::to_string(getpid()).c_str(), 1);
    const char* gpu = std::getenv(kGpu);
    if (!gpu || !*gpu)
    {
        const std::string text = wire::EncodeDeviceDescription(welcome);
        setenv(kGpu, text.c_str(), 1);
        // For what it starts with an environment copied earlier (os.environ): by its pid.
        const std::string path = DescriptionFile(getpid());
        const std::string temporary = path + ".part";
        if (std::ofstream(temporary) << text << '\n')
        {
            g_wroteDescription = std::rename(temporary.c_str(), path.c_str()) == 0;
        }
    }
}

void ProcessRole::OnGoodbye()
{
    if (g_wroteDescription)
    {
        g_wroteDescription = false;
        std::remove(DescriptionFile(getpid()).c_str());
    }
}

std::string ProcessRole::CommandLine()
{
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string words((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!words.empty() && words.back() == '\0')
    {
        words.pop_back();
    }
    for (char& c : words)
    {
        c = c == '\0' ? ' ' : c;
    }
    constexpr std::size_t kMax = 300;
    if (words.size() > kMax)
    {
        words = words.substr(0, kMax) + " ...";
    }
    return words.empty() ? "?" : words;
}

} // namespace phantora::interposer

__attribute__((constructor)) static void PhantoraClaimTheRank()
{
    phantora::interposer::ProcessRole::ClaimAtLoad();
}
