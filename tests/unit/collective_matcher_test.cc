#include "engine/collective_error.h"
#include "engine/collective_matcher.h"

#include <gtest/gtest.h>
#include <vector>

using namespace phantora;

TEST(CollectiveMatcher, CollectiveStartsAtTheLastMembersReadyTime)
{
    const Communicator comm{1, {0, 1}};
    std::vector<MatchedCollective> started;
    CollectiveMatcher m([&](const MatchedCollective& c) { started.push_back(c); });
    m.Ready(comm, 0, 1, wire::CollectiveOp::AllReduce, 4096, 11, 700);
    EXPECT_TRUE(started.empty());
    EXPECT_EQ(m.Incomplete().size(), 1U);
    m.Ready(comm, 0, 0, wire::CollectiveOp::AllReduce, 4096, 10, 300);
    ASSERT_EQ(started.size(), 1U);
    EXPECT_EQ(started[0].startNs, 700);
    EXPECT_EQ(started[0].memberTickets, (std::vector<uint64_t>{10, 11}));
    EXPECT_TRUE(m.Incomplete().empty());
}

TEST(CollectiveMatcher, MismatchedSizesAreReported)
{
    const Communicator comm{1, {0, 1}};
    CollectiveMatcher m([](const MatchedCollective&) {});
    m.Ready(comm, 0, 0, wire::CollectiveOp::AllReduce, 4096, 1, 0);
    EXPECT_THROW(m.Ready(comm, 0, 1, wire::CollectiveOp::AllReduce, 8192, 2, 0), CollectiveError);
}
