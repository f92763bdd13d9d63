// libFuzzer target for the scenario reader: any text either reads as a scenario or is
// refused with a ScenarioError (which names the file, line and key), never another
// exception or a crash.  The text is written to a file, as the reader takes one.
#include "scenario_loader.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    static const std::filesystem::path file =
        std::filesystem::temp_directory_path() /
        ("phantora-scenario-fuzz-" + std::to_string(getpid()) + ".toml");
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try
    {
        (void)phantora::LoadScenario(file);
    }
    catch (const phantora::ScenarioError&)
    {
        // refused, naming where: what the reader must do with text that is not a scenario
    }
    return 0;
}
