#include "process_role.h"

#include "fatal.h"
#include "protocol/device_description.h"
#include "rank_client.h"

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
                       const char* gpu = std::getenv(kGpu);
                       if (!gpu || !*gpu)
                       {
                           error = std::string(kGpu) + " is not set";
                           return;
                       }
                       try
                       {
                           device = wire::DecodeDeviceDescription(gpu);
                       }
                       catch (const std::exception& e)
                       {
                           error = std::string(kGpu) + ": " + e.what();
                       }
                   });
    if (!device)
    {
        Fatal("pid " + std::to_string(getpid()) + " (" + CommandLine() +
              "), a process rank " + (std::getenv("RANK") ? std::getenv("RANK") : "0") +
              " started, asked " + call +
              " for the simulated GPU, which processes that are no rank answer from the "
              "launcher's description of it, and " + error +
              " (phantora-cluster sets it; under phantora-rank the rank sets it for what it "
              "starts after its first CUDA call)");
    }
    return *device;
}

void ProcessRole::OnConnected(const wire::Welcome& welcome)
{
    setenv(kClaim, std::to_string(getpid()).c_str(), 1);
    const char* gpu = std::getenv(kGpu);
    if (!gpu || !*gpu)
    {
        setenv(kGpu, wire::EncodeDeviceDescription(welcome).c_str(), 1);
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
