#include "compile_environment.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace phantora
{

namespace
{

bool Set(const char* name)
{
    const char* v = std::getenv(name);
    return v && *v;
}

} // namespace

std::map<std::string, std::string> CompileEnvironment(const std::string& interposer,
                                                      const std::string& gpuModel)
{
    std::map<std::string, std::string> env;
    if (!Set("TRITON_LIBCUDA_PATH"))
    {
        env["TRITON_LIBCUDA_PATH"] =
            (std::filesystem::path(interposer).parent_path() / "driver").string();
    }
    std::string model;
    for (char c : gpuModel)
    {
        model += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    const char* tmp = std::getenv("TMPDIR");
    const std::filesystem::path base = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
                                       ("phantora-compile-" + std::to_string(getuid())) / model;
    if (!Set("TORCHINDUCTOR_CACHE_DIR"))
    {
        env["TORCHINDUCTOR_CACHE_DIR"] = (base / "inductor").string();
    }
    if (!Set("TRITON_CACHE_DIR"))
    {
        env["TRITON_CACHE_DIR"] = (base / "triton").string();
    }
    return env;
}

} // namespace phantora
