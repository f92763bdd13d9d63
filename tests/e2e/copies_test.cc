// Pitched, peer, symbol and 2D-memset copies cost what the plain copy of the same bytes and
// direction costs, and a 2D device-to-host copy writes only the rows' widths.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <regex>

using namespace phantora::test;

TEST(Copies, EveryVariantCostsItsPlainEquivalent)
{
    // Host time off, so each elapsed time is the copy's alone.
    const auto scenario = WriteFile(
        "s.toml", SwitchScenario(1, "[cpu]\ntime_scale = 0.0\ncall_overhead = \"0us\"\n"));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 -- {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_COPIES_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    static const std::regex line(R"(copy ([\w-]+) status (\d+) time ([0-9.]+) us)");
    std::map<std::string, std::pair<int, double>> seen;
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), line), end; it != end; ++it)
    {
        seen[(*it)[1]] = {std::stoi((*it)[2]), std::stod((*it)[3])};
    }
    ASSERT_EQ(seen.size(), 13U) << r.output;
    for (const char* variant :
         {"h2d-2d", "d2h-2d", "d2d-peer", "memset-2d", "h2d-symbol", "d2h-symbol"})
    {
        const std::string name(variant);
        const std::string plain = name.substr(0, name.rfind('-')) + "-plain";
        const std::string base = name.find("symbol") != std::string::npos ? name + "-plain" : plain;
        ASSERT_EQ(seen.count(base), 1U) << base;
        EXPECT_EQ(seen[name].first, 0) << name;
        EXPECT_GT(seen[name].second, 0.0) << name;
        EXPECT_NEAR(seen[name].second, seen[base].second, 0.001) << name << " vs " << base << "\n"
                                                                 << r.output;
    }
    // Different directions cost differently here (PCIe vs HBM), so the pairs above are not
    // trivially equal.
    EXPECT_GT(seen["h2d-plain"].second, 2 * seen["d2d-plain"].second) << r.output;
    EXPECT_NE(seen["bad-pitch"].first, 0) << r.output;
    EXPECT_NE(r.output.find("d2h-2d rows right"), std::string::npos) << r.output;
}
