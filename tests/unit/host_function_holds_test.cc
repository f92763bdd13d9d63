// Host functions on streams alone: the hold ends once the stream reached the function
// and the rank ran it, at the later of the two instants, whichever comes first.
#include "engine/host_function_holds.h"
#include "engine/simulation_error.h"

#include <gtest/gtest.h>
#include <tuple>
#include <vector>

using namespace phantora;

namespace
{

struct Ends
{
    std::vector<std::tuple<int, uint64_t, int64_t>> ends; ///< (rank, ticket, end)
    HostFunctionHolds holds{[this](int rank, uint64_t ticket, int64_t endNs)
                            { ends.emplace_back(rank, ticket, endNs); }};
};

} // namespace

TEST(HostFunctionHolds, EndsWhenItReturnsAfterItsStreamReachedIt)
{
    Ends e;
    e.holds.Hold(1, 7, 42);
    e.holds.Ready(1, 7, 1000);
    EXPECT_TRUE(e.ends.empty()) << "the rank has not run it yet";
    e.holds.Done(1, 7, 2500);
    ASSERT_EQ(e.ends.size(), 1U);
    EXPECT_EQ(e.ends[0], std::make_tuple(1, uint64_t{42}, int64_t{2500}));
}

TEST(HostFunctionHolds, EndsWhenItsStreamReachesItAfterItReturned)
{
    Ends e;
    e.holds.Hold(0, 3, 9);
    e.holds.Done(0, 3, 500);
    EXPECT_TRUE(e.ends.empty()) << "the stream has not reached it yet";
    e.holds.Ready(0, 3, 4000);
    ASSERT_EQ(e.ends.size(), 1U);
    EXPECT_EQ(e.ends[0], std::make_tuple(0, uint64_t{9}, int64_t{4000}));
}

TEST(HostFunctionHolds, RanksKeepTheirOwnFunctions)
{
    Ends e;
    e.holds.Hold(0, 1, 10);
    e.holds.Hold(1, 1, 11);
    e.holds.Ready(1, 1, 300);
    e.holds.Done(0, 1, 200);
    EXPECT_TRUE(e.ends.empty());
    e.holds.Done(1, 1, 100);
    ASSERT_EQ(e.ends.size(), 1U);
    EXPECT_EQ(e.ends[0], std::make_tuple(1, uint64_t{11}, int64_t{300}));
}

TEST(HostFunctionHolds, AReturnOfAFunctionNeverLaunchedIsRefused)
{
    Ends e;
    EXPECT_THROW(e.holds.Done(0, 5, 100), SimulationError);
    e.holds.Hold(0, 5, 1);
    e.holds.Done(0, 5, 100);
    EXPECT_THROW(e.holds.Done(0, 5, 200), SimulationError) << "it returned already";
}
