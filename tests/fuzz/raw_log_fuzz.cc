// libFuzzer target for the raw-log reader (gpu_model/profile/raw_log.h), what `gpu_profiler
// import` reads from the GPU machine: any bytes either read as a log or are refused with a
// ProfileError naming the file and line, never another exception, a crash or an unbounded
// allocation.  The first byte picks the file's form: plain text, or zstd (.tsv.zst, as
// data/raw/profiles keeps the large ones).  A plain log is also joined as a recorder's
// per-process part (JoinRawParts) and its host-time lines copied (AppendHostPass), and what
// was joined must read again.
#include "gpu_model/profile/raw_log.h"
#include "gpu_model/profile/sqlite_handle.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace phantora::profile;

namespace
{

std::filesystem::path Scratch(const std::string& name)
{
    return std::filesystem::temp_directory_path() /
           ("phantora-raw-log-fuzz-" + std::to_string(getpid()) + "-" + name);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    if (size == 0)
    {
        return 0;
    }
    const bool zstd = (data[0] & 1) != 0;
    static const std::filesystem::path plain = Scratch("log.tsv");
    static const std::filesystem::path compressed = Scratch("log.tsv.zst");
    static const std::filesystem::path joined = Scratch("joined.tsv");
    const std::filesystem::path& file = zstd ? compressed : plain;
    const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    try
    {
        const RawLog log = RawLog::Read(file);
        if (!zstd)
        {
            JoinRawParts({file}, joined);
            const RawLog again = RawLog::Read(joined);
            if (again.samples != log.samples || again.sampleArgs != log.sampleArgs)
            {
                std::abort(); // joining one part must keep its ops as they were
            }
        }
    }
    catch (const ProfileError&)
    {
        // refused, naming the file and line: what the reader must do with a bad log
    }
    std::istringstream in(bytes);
    std::ostringstream out;
    (void)AppendHostPass(in, out);
    return 0;
}
