// The calibrated NVLink scenario against measured collectives (4x H200, NCCL 2.28.9):
// every graph-mode row of tests/data/h200x4-nvlink/nccl_perf.csv (nccl-tests' method:
// back-to-back calls replayed from a CUDA graph, so NCCL's own time with no host time
// between calls) is simulated with the same NCCL model and network phantora-cluster
// uses, as the measurement issued it: the row's `iters` calls back to back, each rank
// starting its next call once its own part of the previous one ended (BenchCollective);
// the errors are bounded and NCCL's logged choice of protocol and channels is compared
// with the model's.  Run the binary alone to see the whole table.
#include "nccl_bench.h"
#include "scenario_loader.h"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace
{

struct Row
{
    std::string op;
    uint32_t n{0};
    uint64_t bytes{0};
    double measuredUs{0};
    std::string protocol; ///< what NCCL logged ("" for point-to-point)
    uint32_t channels{0};
    uint32_t iters{1}; ///< calls back to back the time is the mean of
};

std::vector<std::string> SplitCsv(std::string line)
{
    if (!line.empty() && line.back() == '\r')
    {
        line.pop_back();
    }
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ','))
    {
        cells.push_back(cell);
    }
    if (!line.empty() && line.back() == ',')
    {
        cells.emplace_back();
    }
    return cells;
}

/// The rows of \p mode, columns found by the header's names.
std::vector<Row> ReadCsv(const std::string& path, const std::string& mode)
{
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = SplitCsv(line);
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i)
    {
        col[header[i]] = i;
    }
    for (const char* name :
         {"op", "world", "mode", "bytes", "time_us", "protocol", "channels", "iters"})
    {
        if (col.count(name) == 0)
        {
            throw std::runtime_error(path + ": no column '" + name + "' in the header");
        }
    }
    std::vector<Row> rows;
    while (std::getline(in, line))
    {
        const auto c = SplitCsv(line);
        if (c.size() < header.size() || c[col["mode"]] != mode)
        {
            continue;
        }
        const std::string& ch = c[col["channels"]];
        rows.push_back({c[col["op"]], static_cast<uint32_t>(std::stoul(c[col["world"]])),
                        std::stoull(c[col["bytes"]]), std::stod(c[col["time_us"]]),
                        c[col["protocol"]], ch.empty() ? 0U : static_cast<uint32_t>(std::stoul(ch)),
                        static_cast<uint32_t>(std::stoul(c[col["iters"]]))});
    }
    return rows;
}

/// NCCL's choice per (op, n, whole-buffer bytes), from rank 0's NCCL_DEBUG=INFO log of the
/// graph-mode run on n GPUs.  NCCL prints "AllGather: X Bytes -> Algo RING proto LL
/// channel{Lo..Hi}={0..23}" with X = count x type size (src/enqueue.cc), which for an
/// all-gather or reduce-scatter is one rank's share: the whole buffer is n X.  (The CSV's
/// algorithm/protocol/channels columns were joined on X as if it were the whole buffer, so
/// for those two collectives they belong to the row of n times the size; the log is read
/// here instead.)
struct NcclChoice
{
    std::string algorithm;
    std::string protocol;
    uint32_t channels{0};
};

std::map<std::tuple<std::string, uint32_t, uint64_t>, NcclChoice>
ReadNcclLogs(const std::string& dir)
{
    static const std::map<std::string, std::string> kNames{{"AllReduce", "all_reduce"},
                                                           {"AllGather", "all_gather"},
                                                           {"ReduceScatter", "reduce_scatter"},
                                                           {"Broadcast", "broadcast"}};
    const std::regex line(
        R"(NCCL INFO (\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\})");
    std::map<std::tuple<std::string, uint32_t, uint64_t>, NcclChoice> out;
    for (uint32_t n : {2U, 4U})
    {
        const std::string path = fmt::format("{}/nccl_debug_graph_{}gpu_rank0.log", dir, n);
        std::ifstream in(path);
        if (!in)
        {
            throw std::runtime_error(path + ": cannot open");
        }
        std::string text;
        std::smatch m;
        while (std::getline(in, text))
        {
            if (!std::regex_search(text, m, line) || kNames.count(m[1]) == 0)
            {
                continue;
            }
            const std::string op = kNames.at(m[1]);
            const bool perRank = op == "all_gather" || op == "reduce_scatter";
            const uint64_t bytes = std::stoull(m[2]) * (perRank ? n : 1);
            auto lower = [](std::string v)
            {
                for (char& c : v)
                {
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                }
                return v;
            };
            out[{op, n, bytes}] = {lower(m[3]), lower(m[4]),
                                   static_cast<uint32_t>(std::stoul(m[6]) - std::stoul(m[5]) + 1)};
        }
    }
    return out;
}

constexpr uint64_t kSmall = 64 * 1024;

// The targets (issue 36): every collective point from 64 KiB up within 10 %, below within
// 25 %, NCCL's algorithm and protocol on 95 % of the points.  The test asserts the bounds
// the model reaches without per-size or per-collective constants, and the shares, so that
// a regression shows; tests/data/h200x4-nvlink/README.md says what is still missed and why.
constexpr double kLargeTarget = 0.10;
constexpr double kSmallTarget = 0.25;
constexpr double kLargeBound = 0.42; // reached: 40.7 % (reduce_scatter n=4, 8 MiB)
constexpr double kSmallBound = 0.27; // reached: 25.2 % (broadcast n=2)
// collectives (all-reduce, all-gather, reduce-scatter, broadcast) >= 64 KiB within 10 %
constexpr double kMinCollectiveShare = 0.69;      // reached: 95 of 136
constexpr double kMinCollectiveSmallShare = 0.95; // reached: 103 of 104
// every row, point-to-point included, within its target
constexpr double kMinWithinTargetShare = 0.78; // reached: 283 of 359
// algorithm and protocol as NCCL's log has them
constexpr double kMinChoiceAgreement = 0.95; // reached: 240 of 240

/// A point more than twice as slow as both its neighbours in size is a glitch of the
/// measurement (all_to_all n=4 at 64 KiB: 42.8 us between 14.4 and 13.9): printed, not
/// asserted.
bool IsGlitch(const std::vector<Row>& rows, std::size_t i)
{
    if (i == 0 || i + 1 >= rows.size())
    {
        return false;
    }
    const Row& a = rows[i - 1];
    const Row& b = rows[i + 1];
    const Row& r = rows[i];
    const bool sameSeries = a.op == r.op && b.op == r.op && a.n == r.n && b.n == r.n;
    return sameSeries && r.measuredUs > 2 * a.measuredUs && r.measuredUs > 2 * b.measuredUs;
}

bool IsCollective(const std::string& op)
{
    return op == "all_reduce" || op == "all_gather" || op == "reduce_scatter" || op == "broadcast";
}

TEST(NcclCalibration, H200x4NvlinkMatchesMeasuredCollectives)
{
    const std::string data = std::string(PHANTORA_SOURCE_DIR) + "/tests/data/h200x4-nvlink";
    const auto scenario =
        phantora::LoadScenario(std::string(PHANTORA_SOURCE_DIR) + "/scenarios/h200x4-nvlink.toml");
    const auto rows = ReadCsv(data + "/nccl_perf.csv", "graph");
    const auto logged = ReadNcclLogs(data + "/nccl_logs");
    ASSERT_EQ(rows.size(), 360U); // 6 collectives x 2 world sizes x 30 sizes (8 B - 4 GiB)
    // rows come sorted by op, world size, bytes (nccl_tuning.py), as IsGlitch() needs
    fmt::print("{:>14} {:>2} {:>11} {:>10} {:>10} {:>8}  {:<18} {}\n", "op", "n", "bytes",
               "meas_us", "sim_us", "err_%", "model", "nccl (its log)");
    std::map<std::string, double> worst;
    int withinTarget = 0;
    int asserted = 0;
    int collLarge = 0;
    int collLargeWithin = 0;
    int collSmall = 0;
    int collSmallWithin = 0;
    int choiceRows = 0;
    int choiceAgree = 0;
    int channelAgree = 0;
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
        const Row& r = rows[i];
        const auto kind = phantora::ParseCollectiveKind(r.op);
        ASSERT_TRUE(kind.has_value()) << r.op;
        const auto sim = phantora::BenchCollective(scenario, *kind, r.n, r.bytes, r.iters);
        const double err = (sim.timeUs - r.measuredUs) / r.measuredUs;
        const auto it = logged.find({r.op, r.n, r.bytes});
        fmt::print("{:>14} {:>2} {:>11} {:>10.2f} {:>10.2f} {:>+8.1f}  {:<18} {}\n", r.op, r.n,
                   r.bytes, r.measuredUs, sim.timeUs, err * 100,
                   fmt::format("{}/{}/{}ch", sim.algorithm, sim.protocol, sim.nChannels),
                   it == logged.end() ? "-"
                                      : fmt::format("{}/{}/{}ch", it->second.algorithm,
                                                    it->second.protocol, it->second.channels));
        if (it != logged.end())
        {
            ++choiceRows;
            const bool agree =
                it->second.algorithm == sim.algorithm && it->second.protocol == sim.protocol;
            choiceAgree += agree ? 1 : 0;
            channelAgree += it->second.channels == sim.nChannels ? 1 : 0;
        }
        if (IsGlitch(rows, i))
        {
            fmt::print("{:>14} {:>2} {:>11}: a glitch of the measurement, not asserted\n", r.op,
                       r.n, r.bytes);
            continue;
        }
        const bool small = r.bytes < kSmall;
        auto& w = worst[fmt::format("{} n={} {}", r.op, r.n, small ? "<64KiB" : ">=64KiB")];
        w = std::max(w, std::fabs(err));
        ++asserted;
        const bool within = std::fabs(err) <= (small ? kSmallTarget : kLargeTarget);
        withinTarget += within ? 1 : 0;
        if (IsCollective(r.op))
        {
            (small ? collSmall : collLarge) += 1;
            (small ? collSmallWithin : collLargeWithin) += within ? 1 : 0;
        }
        EXPECT_LE(std::fabs(err), small ? kSmallBound : kLargeBound)
            << r.op << " n=" << r.n << " " << r.bytes << " B: measured " << r.measuredUs
            << " us, simulated " << sim.timeUs << " us";
    }
    for (const auto& [k, v] : worst)
    {
        fmt::print("worst |error| {}: {:.1f} %\n", k, v * 100);
    }
    fmt::print("collectives (all_reduce, all_gather, reduce_scatter, broadcast): {} of {} points "
               ">= 64 KiB within 10 %, {} of {} below within 25 %\n",
               collLargeWithin, collLarge, collSmallWithin, collSmall);
    fmt::print("every row: {} of {} within 10 % (>= 64 KiB) / 25 % (< 64 KiB)\n", withinTarget,
               asserted);
    fmt::print("NCCL's algorithm and protocol (its log) chosen on {} of {} points, its channel "
               "count on {}\n",
               choiceAgree, choiceRows, channelAgree);
    EXPECT_GE(collLargeWithin, kMinCollectiveShare * collLarge);
    EXPECT_GE(collSmallWithin, kMinCollectiveSmallShare * collSmall);
    EXPECT_GE(withinTarget, kMinWithinTargetShare * asserted);
    EXPECT_GE(choiceAgree, kMinChoiceAgreement * choiceRows);
}

} // namespace
