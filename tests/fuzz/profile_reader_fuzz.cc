// libFuzzer target for the profile reader (gpu_model/profile/profile_reader.h): any file
// given as a profile (--profile, a user's own recording) either reads, with its host-time
// sequences and the host-time model learned from them (what phantora-cluster prepares at
// start-up), or is refused with a ProfileError naming the file, never another exception,
// a crash, a hang or an unbounded allocation.  The input is the database file's bytes.
#include "gpu_model/profile/learned_host_model.h"
#include "gpu_model/profile/profile_reader.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace phantora::profile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    static const std::filesystem::path file =
        std::filesystem::temp_directory_path() /
        ("phantora-profile-fuzz-" + std::to_string(getpid()) + ".sqlite");
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try
    {
        const ProfileReader reader(file);
        std::vector<std::string> runs;
        for (const auto& [name, run] : reader.Runs())
        {
            runs.push_back(name);
        }
        (void)reader.HostSequences(runs);
        for (const auto& [key, stats] : reader.Ops())
        {
            (void)reader.SameName(key.kind, key.name);
        }
        (void)LearnHostModel(reader, LearnOptions{}, ReferenceHostNs(reader));
    }
    catch (const ProfileError&)
    {
        // refused, naming the file: what the reader must do with a database that is not a
        // profile, or a corrupt one
    }
    return 0;
}
