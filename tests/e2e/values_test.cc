// Small device buffers carry their real bytes through copies, NCCL collectives and
// send/recv; what a kernel wrote reads as zeros.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace phantora::test;

TEST(Values, SmallCollectivesComputeTheirRealResults)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(3));
    const CommandResult r =
        RunCommand(fmt::format("{} --scenario {} --nproc 3 -- {}", PHANTORA_CLUSTER,
                               scenario.string(), PHANTORA_VALUES_PROGRAM));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (int rank = 0; rank < 3; ++rank)
    {
        const auto expect = [&](const std::string& line)
        {
            EXPECT_NE(r.output.find(fmt::format("rank {}: {}\n", rank, line)), std::string::npos)
                << "missing: rank " << rank << ": " << line << "\n"
                << r.output;
        };
        expect("all-gather 10 -1 20 -2 30 -3");
        expect("all-reduce sum 3 5 3 max 3 5 3");
        expect("broadcast 17 17 17 17");
        // element `rank` of every rank summed: sum over q of (q + rank + 0.5)
        expect(fmt::format("reduce-scatter {}", 3 + 3 * rank + 1.5));
        expect(fmt::format("partly known all-gather 0 0 0 0 0 0; own 0 {}", 7 + rank));
        expect("reallocated same reads 0");
        // A kernel's output is unknown (value_shadow.h): not the bytes the memory held.
        expect("kernel-written reads 1 2 0 0 0 0 0 0");
        expect("kernel input and output read 1 2 0 0");
        // from the rank before: 100 + it, its square
        const int prev = (rank + 2) % 3;
        expect(fmt::format("ring recv {} {}", 100 + prev, prev * prev));
        expect("large all-reduce reads 0");
    }
    // The size read back decides the second receive's size, as in send_object_list.
    EXPECT_NE(r.output.find("rank 1: object of 15 bytes: pickled shapes\n"), std::string::npos)
        << r.output;
}
