#include "static_cuda_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace phantora
{

std::optional<std::filesystem::path> FindProgram(const std::string& command0)
{
    if (command0.empty())
    {
        return std::nullopt;
    }
    if (command0.find('/') != std::string::npos)
    {
        return std::filesystem::path(command0);
    }
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');)
    {
        const std::filesystem::path candidate =
            std::filesystem::path(dir.empty() ? "." : dir) / command0;
        if (access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate))
        {
            return candidate;
        }
    }
    return std::nullopt;
}

bool LinksCudaRuntimeStatically(const std::filesystem::path& program)
{
    std::ifstream in(program, std::ios::binary);
    char magic[4] = {};
    if (!in.read(magic, 4) || !std::equal(magic, magic + 4,
                                          "\x7f"
                                          "ELF"))
    {
        return false;
    }
    // libcudart_static names its shared memory "/cudart.shm.*"; libcudart.so holds those
    // strings, a program linked against it does not.
    const std::string marker = "/cudart.shm.";
    std::vector<char> buf(1 << 20);
    std::string carry;
    while (in)
    {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        const auto n = static_cast<std::size_t>(in.gcount());
        if (n == 0)
        {
            break;
        }
        std::string chunk = carry + std::string(buf.data(), n);
        if (chunk.find(marker) != std::string::npos)
        {
            return true;
        }
        carry = chunk.substr(chunk.size() - std::min(chunk.size(), marker.size() - 1));
    }
    return false;
}

} // namespace phantora
