#include "engine/collective_error.h"
#include "engine/communicator_registry.h"

#include <gtest/gtest.h>

using namespace phantora;

namespace
{
wire::NcclId Id(uint8_t v)
{
    wire::NcclId id{};
    id.fill(v);
    return id;
}
} // namespace

TEST(CommunicatorRegistry, InitCompletesWhenEveryMemberJoined)
{
    CommunicatorRegistry reg;
    EXPECT_FALSE(reg.Join(Id(1), 3, 2, 7));
    EXPECT_FALSE(reg.Join(Id(1), 3, 0, 5));
    EXPECT_EQ(reg.PendingInits().size(), 1U);
    auto joined = reg.Join(Id(1), 3, 1, 6);
    ASSERT_TRUE(joined);
    EXPECT_EQ(joined->comm->ranks, (std::vector<int>{5, 6, 7}));
    EXPECT_EQ(reg.MemberIndex(*joined->comm, 7), 2);
    EXPECT_THROW(reg.MemberIndex(*joined->comm, 9), CollectiveError);
    EXPECT_TRUE(reg.PendingInits().empty());
}

TEST(CommunicatorRegistry, InconsistentInitIsAnError)
{
    CommunicatorRegistry reg;
    reg.Join(Id(2), 2, 0, 0);
    EXPECT_THROW(reg.Join(Id(2), 3, 1, 1), CollectiveError);
    EXPECT_THROW(reg.Join(Id(2), 2, 0, 1), CollectiveError);
    EXPECT_THROW(reg.Join(Id(3), 2, 5, 1), CollectiveError);
}

TEST(CommunicatorRegistry, SplitGroupsByColorAndOrdersByKey)
{
    CommunicatorRegistry reg;
    for (int r = 0; r < 3; ++r)
    {
        reg.Join(Id(4), 4, r, 10 + r);
    }
    const Communicator& parent = *reg.Join(Id(4), 4, 3, 13)->comm;
    // ranks 10..13: colors 0, 1, 0, NOCOLOR; keys reverse the order within color 0
    EXPECT_FALSE(reg.Split(parent, 10, 0, 5));
    EXPECT_FALSE(reg.Split(parent, 11, 1, 0));
    EXPECT_FALSE(reg.Split(parent, 13, -1, 0));
    const auto result = reg.Split(parent, 12, 0, 1);
    ASSERT_TRUE(result);
    ASSERT_EQ(result->members.size(), 4U);
    const Communicator* even = result->members[0].second;
    ASSERT_NE(even, nullptr);
    EXPECT_EQ(even, result->members[2].second);
    EXPECT_EQ(even->ranks, (std::vector<int>{12, 10})); // key 1 before key 5
    EXPECT_EQ(result->members[1].second->ranks, (std::vector<int>{11}));
    EXPECT_EQ(result->members[3].second, nullptr);
    // a second split of the same parent is a new, separate split
    EXPECT_FALSE(reg.Split(parent, 10, 0, 0));
}
