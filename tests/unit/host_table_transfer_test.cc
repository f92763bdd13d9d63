// The host-time tables reach a rank whatever their size: its Welcome announces them and it
// reads them in chunks (wire::TableChunk / TableData), each message within its kind's
// bound.  Here every message goes through the codec, as on the socket, for the largest
// table a committed profile prepares for one of its recorded commands and for a synthetic
// table of a million gaps, and the rank's copy parses to the same table.
#include "engine/simulation_engine.h"
#include "gpu_model/profile/profile_reader.h"
#include "host_time/host_gap_table.h"
#include "host_time_profile.h"
#include "protocol/codec.h"
#include "scripted_ranks.h"

#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

using namespace phantora;

namespace
{

/// Sends \p body as rank 0's \p order-th request (through the codec) and returns the one
/// reply (through the codec too).
wire::Reply Ask(SimulationEngine& engine, uint64_t order, wire::Request body)
{
    wire::RequestEnvelope req;
    req.seq = order + 1;
    req.order = order;
    req.body = std::move(body);
    std::vector<OutgoingReply> out;
    engine.Handle(0, wire::DecodeRequest(wire::Encode(req)), out);
    if (out.size() != 1)
    {
        throw std::runtime_error("expected one reply, got " + std::to_string(out.size()));
    }
    const std::string bytes = wire::Encode(out.front().reply);
    EXPECT_LE(bytes.size(), wire::MaxReplyBytes(out.front().reply.body.index()));
    return wire::DecodeReply(bytes).body;
}

struct Received
{
    std::string table;
    std::size_t chunks{0};
};

/// What rank 0 receives of the host-time table of \p profile: its hello, then chunks.
Received TableReachingARank(const HostTimeProfile& profile)
{
    const Scenario s = test::EngineScenario("tables", 1, 0);
    SimulationEngine engine(s, 1);
    engine.SetHostTime(profile);
    wire::Hello hello;
    hello.worldSize = 1;
    const auto welcome = std::get<wire::Welcome>(Ask(engine, 0, hello));
    EXPECT_EQ(welcome.hostTimeTableBytes, profile.table.size());
    Received r;
    uint64_t order = 1;
    while (r.table.size() < welcome.hostTimeTableBytes)
    {
        const auto data = std::get<wire::TableData>(
            Ask(engine, order++, wire::TableChunk{wire::HostTable::HostTime, r.table.size()}));
        EXPECT_FALSE(data.bytes.empty());
        EXPECT_LE(data.bytes.size(), wire::kMaxTableChunkBytes);
        r.table += data.bytes;
        ++r.chunks;
    }
    return r;
}

std::vector<std::string> Words(const std::string& command)
{
    std::istringstream in(command);
    std::vector<std::string> words;
    for (std::string w; in >> w;)
    {
        words.push_back(w);
    }
    return words;
}

} // namespace

TEST(HostTableTransfer, AMillionGapTableReachesTheRankInChunksWithinTheBounds)
{
    std::unordered_map<uint64_t, int64_t> gaps;
    for (uint64_t k = 0; k < 1000000; ++k)
    {
        gaps.emplace(k * 0x9e3779b97f4a7c15ull, static_cast<int64_t>(1000 + k % 5000));
    }
    HostTimeProfile profile;
    profile.origin = HostTimeOrigin::Recording;
    profile.table = host_time::GapTable::FromFigures(std::move(gaps), {}, 2500).Serialize();
    ASSERT_GT(profile.table.size(), 15u * wire::kMaxTableChunkBytes) << "16 bytes a gap";
    const Received r = TableReachingARank(profile);
    EXPECT_EQ(r.table, profile.table);
    EXPECT_EQ(r.chunks,
              (profile.table.size() + wire::kMaxTableChunkBytes - 1) / wire::kMaxTableChunkBytes);
    EXPECT_EQ(host_time::GapTable::Parse(r.table).Keys(), 1000000u);
}

TEST(HostTableTransfer, TheLargestCommittedProgramTableReachesTheRank)
{
    // Every command a committed profile recorded with host time, prepared as
    // phantora-cluster prepares it for a run of that command, and the model of every
    // recorded program (what a program nobody recorded is charged): the largest wins.
    HostTimeProfile largest;
    std::string which;
    for (const char* gpu : {"H100", "H200"})
    {
        const auto file = std::filesystem::path(PHANTORA_SOURCE_DIR) / "profiles" /
                          (std::string(gpu) + ".sqlite");
        ASSERT_TRUE(std::filesystem::is_regular_file(file)) << file;
        const profile::ProfileReader reader(file);
        CpuSpec cpu;
        cpu.localScale = 1.0; // no host-speed benchmark in a unit test
        std::set<std::string> seen;
        HostTimeProfile model =
            HostTimeProfile::Prepare(&reader, {"python3", "a_program_nobody_recorded.py"}, 1, cpu);
        if (model.table.size() > largest.table.size())
        {
            largest = std::move(model);
            which = std::string(gpu) + ": the model of every recorded program";
        }
        for (const auto& [name, run] : reader.Runs())
        {
            if (!run.hostGaps || !seen.insert(run.command).second)
            {
                continue;
            }
            HostTimeProfile p =
                HostTimeProfile::Prepare(&reader, Words(run.command), run.ranks, cpu);
            if (p.table.size() > largest.table.size())
            {
                largest = std::move(p);
                which = std::string(gpu) + ": " + run.command;
            }
        }
    }
    ASSERT_FALSE(largest.table.empty());
    const Received r = TableReachingARank(largest);
    EXPECT_EQ(r.table, largest.table) << which;
    const host_time::GapTable parsed = host_time::GapTable::Parse(r.table);
    EXPECT_EQ(parsed.Serialize(), largest.table);
    std::printf("largest committed program table: %zu bytes, %zu keys, %zu chunks (%s)\n",
                largest.table.size(), parsed.Keys(), r.chunks, which.c_str());
}
