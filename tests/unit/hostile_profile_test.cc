// Profiles and raw logs come from anyone (--profile, a user's recording): what the fuzzers
// (tests/fuzz/raw_log_fuzz.cc, profile_reader_fuzz.cc) showed the readers must refuse is
// refused with a ProfileError naming the file, never read wrongly, thrown as another
// exception or left to run without end.
#include "gpu_model/profile/profile_reader.h"
#include "gpu_model/profile/profile_writer.h"
#include "gpu_model/profile/program_name.h"
#include "gpu_model/profile/raw_log.h"
#include "gpu_model/profile/sqlite_handle.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

using namespace phantora::profile;
namespace fs = std::filesystem;

namespace
{

fs::path Scratch(const std::string& name)
{
    const fs::path dir =
        fs::temp_directory_path() / ("phantora-hostile-profile-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const fs::path p = dir / name;
    fs::remove(p);
    return p;
}

fs::path Log(const std::string& name, const std::string& text)
{
    const fs::path p = Scratch(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

void ExpectRefused(const std::function<void()>& f, const std::vector<std::string>& words)
{
    try
    {
        f();
        ADD_FAILURE() << "not refused";
    }
    catch (const ProfileError& e)
    {
        for (const auto& w : words)
        {
            EXPECT_NE(std::string(e.what()).find(w), std::string::npos)
                << "'" << w << "' not in: " << e.what();
        }
    }
}

/// A profile of one kernel and one run with a thread of host time and one read-back.
fs::path SmallProfile(const std::string& name)
{
    const fs::path db = Scratch(name);
    ProfileWriter w(db);
    w.SetMetadata("gpu_model", "H200");
    OpKey k;
    k.kind = OpKind::Kernel;
    k.name = "k(float*)";
    k.grid = {4, 1, 1};
    k.block = {128, 1, 1};
    w.AddSamples(k, {100, 200, 300}, "r.tsv", "record");
    w.AddRun("r.tsv", "p.py", "python p.py");
    phantora::host_time::Sequence s;
    s.labels = {"launch:k(float*)@p+0x10", "sync:device@p+0x20"};
    s.gapBeforeNs = {-1, 500};
    s.callNs = {-1, -1};
    s.reads[1] = std::string("\x01\x02", 2);
    w.SetHostGaps("r.tsv", {{"1.1", s}});
    w.Commit();
    return db;
}

} // namespace

TEST(HostileRawLog, ALaunchShapeBeyond32BitsIsRefusedNotTruncated)
{
    // grid x of 2^32 + 7 would have read as 7
    const fs::path log = Log("wide.tsv", "meta\tgpu_model\tH200\n"
                                         "op\tkernel\tk\t4294967303\t1\t1\t1\t1\t1\t0\t0\t10\n");
    ExpectRefused([&] { RawLog::Read(log); },
                  {log.string() + ":2", "field 4", "4294967303", "0 to 4294967295"});
    const fs::path duration = Log("long.tsv", "op\tkernel\tk\t1\t1\t1\t1\t1\t1\t0\t0\t"
                                              "9223372036854775808\n");
    ExpectRefused([&] { RawLog::Read(duration); }, {duration.string() + ":1", "field 12"});
}

TEST(HostileRawLog, MetadataTheImporterReadsAsNumbersMustBeNumbers)
{
    // `gpu_profiler import` read these with std::stod / std::stoull: "fast" threw
    // std::invalid_argument naming neither the file nor the line
    const fs::path speed = Log("speed.tsv", "meta\thost_speed_ns\tfast\n");
    ExpectRefused([&] { RawLog::Read(speed); }, {speed.string() + ":1", "host_speed_ns", "fast"});
    const fs::path negative = Log("negative.tsv", "meta\thost_speed_ns\t-3\n");
    ExpectRefused([&] { RawLog::Read(negative); }, {"host_speed_ns", "positive"});
    const fs::path dropped = Log("dropped.tsv.0.part", "meta\tdropped_records\tmany\n");
    ExpectRefused([&] { JoinRawParts({dropped}, Scratch("joined.tsv")); },
                  {dropped.string() + ":1", "dropped_records", "non-negative integer"});
    const fs::path fine = Log("fine.tsv", "meta\thost_speed_ns\t812.5\nmeta\tprocesses\t2\n");
    EXPECT_EQ(RawLog::Read(fine).metadata.at("host_speed_ns"), "812.5");
}

TEST(HostileProfile, AViewInPlaceOfATableIsRefusedBeforeItIsQueried)
{
    // A recursive view that never ends: the reader would have hung in its first query.
    const fs::path db = SmallProfile("view.sqlite");
    {
        SqliteDb raw(db, false);
        raw.Exec("ALTER TABLE ops RENAME TO real_ops");
        raw.Exec("CREATE VIEW ops AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                 "FROM n) SELECT 'kernel' AS kind, 'k' AS name, 1 AS grid_x, 1 AS grid_y, "
                 "1 AS grid_z, 1 AS block_x, 1 AS block_y, 1 AS block_z, 0 AS shared_mem, "
                 "0 AS bytes, 1 AS samples, 1.0 AS median_ns, 1.0 AS p10_ns, 1.0 AS p90_ns, "
                 "1.0 AS mean_ns, 0.0 AS stddev_ns, 'record' AS source, i AS id FROM n");
    }
    ExpectRefused([&] { ProfileReader r(db); }, {db.string(), "\"ops\" is a view", "a table"});
}

TEST(HostileProfile, OutOfRangeLaunchShapesAndBadReadBacksAreRefused)
{
    const fs::path shape = SmallProfile("shape.sqlite");
    {
        SqliteDb raw(shape, false);
        raw.Exec("UPDATE ops SET block_x = -1");
    }
    ExpectRefused([&] { ProfileReader r(shape); }, {shape.string(), "block_x -1", "expected 0 to"});
    const fs::path hex = SmallProfile("hex.sqlite");
    {
        SqliteDb raw(hex, false);
        raw.Exec("UPDATE host_readbacks SET bytes = 'zz'");
    }
    const ProfileReader reader(hex); // read-backs are read with the run's host time
    ExpectRefused([&] { reader.HostSequences({"r.tsv"}); },
                  {hex.string(), "host_readbacks of run r.tsv", "\"zz\"", "hex bytes"});
    const auto sequences = ProfileReader(SmallProfile("good.sqlite")).HostSequences({"r.tsv"});
    ASSERT_EQ(sequences.size(), 1u);
    EXPECT_EQ(sequences[0].reads.at(1), std::string("\x01\x02", 2));
}

TEST(HostileProfile, ALaunchersHugeCountsSaturateInsteadOfOverflowing)
{
    EXPECT_EQ(LaunchedRanks("torchrun --nnodes 2000000000 --nproc_per_node 2000000000 t.py"),
              std::numeric_limits<int>::max());
    EXPECT_EQ(LaunchedRanks("torchrun --nnodes 2 --nproc_per_node 4 t.py"), 8);
}
