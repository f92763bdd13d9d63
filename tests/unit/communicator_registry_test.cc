#include "engine/collective_error.h"
#include "engine/communicator_registry.h"
#include "engine/torch_group_color.h"

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

// Folded (engine/fold_layout.h): 8 ranks, data-parallel outermost, 4 replicas of 2 live
// ranks (0 and 1).  A communicator of more ranks than there are live processes is made
// of the live members' replicas, at once.
TEST(CommunicatorRegistry, FoldedWorldCompletesWithTheLiveMembersReplicas)
{
    const FoldLayout fold(8, 4, 2);
    CommunicatorRegistry reg(fold);
    EXPECT_FALSE(reg.Join(Id(1), 8, 1, 1));
    auto joined = reg.Join(Id(1), 8, 0, 0);
    ASSERT_TRUE(joined);
    EXPECT_EQ(joined->comm->ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(joined->waitingRanks, (std::vector<int>{0, 1}));
}

// A data-parallel group of rank 1 (4 ranks, no more than the live processes): it may be
// a group of live ranks only until nothing else can move; then it is rank 1's replicas.
TEST(CommunicatorRegistry, FoldedGroupNoLargerThanTheLiveRanksWaitsForStillness)
{
    const FoldLayout fold(16, 2, 8); // live 0..7, replicas 8..15
    CommunicatorRegistry reg(fold);
    EXPECT_FALSE(reg.Join(Id(2), 2, 0, 1));
    // a group of live ranks 2 and 3 completes as usual
    EXPECT_FALSE(reg.Join(Id(3), 2, 0, 2));
    ASSERT_TRUE(reg.Join(Id(3), 2, 1, 3));
    auto resolved = reg.ResolveFolded();
    ASSERT_EQ(resolved.size(), 1U);
    EXPECT_EQ(resolved[0].comm->ranks, (std::vector<int>{1, 9}));
    EXPECT_EQ(resolved[0].waitingRanks, (std::vector<int>{1}));
    EXPECT_TRUE(reg.PendingInits().empty());
}

// Ranks its live members' replicas cannot make up: the layout does not fold this job.
TEST(CommunicatorRegistry, FoldedCommunicatorTheReplicasCannotMakeUpIsRefused)
{
    const FoldLayout fold(8, 4, 2);
    CommunicatorRegistry reg(fold);
    // 6 ranks: not a multiple of the 4 replicas
    EXPECT_THROW(reg.Join(Id(4), 6, 0, 0), CollectiveError);
    // ranks 1 and 0 as communicator ranks 0 and 1 of the world: ascending order puts rank
    // 0 first
    EXPECT_FALSE(reg.Join(Id(5), 8, 0, 1));
    EXPECT_THROW(reg.Join(Id(5), 8, 1, 0), CollectiveError);
}

// torch splits a group from the world with the color of its ranks: the live members'
// color says whether the group is theirs alone or spans their replicas.
TEST(CommunicatorRegistry, FoldedSplitFollowsTheColorTorchGivesTheGroupsRanks)
{
    const FoldLayout fold(4, 2, 2); // live 0, 1; replicas 2, 3
    CommunicatorRegistry reg(fold);
    EXPECT_FALSE(reg.Join(Id(6), 4, 0, 0));
    const Communicator& world = *reg.Join(Id(6), 4, 1, 1)->comm;
    // data-parallel groups {0, 2} and {1, 3}
    EXPECT_FALSE(reg.Split(world, 0, TorchGroupColor({0, 2}), 0));
    auto split = reg.Split(world, 1, TorchGroupColor({1, 3}), 0);
    ASSERT_TRUE(split);
    ASSERT_EQ(split->members.size(), 2U); // the live ranks, to be answered
    EXPECT_EQ(split->members[0].second->ranks, (std::vector<int>{0, 2}));
    EXPECT_EQ(split->members[1].second->ranks, (std::vector<int>{1, 3}));
    // a group of the live ranks {0, 1} (replica 1's copy {2, 3} has no live member)
    EXPECT_FALSE(reg.Split(world, 0, TorchGroupColor({0, 1}), 0));
    split = reg.Split(world, 1, TorchGroupColor({0, 1}), 1);
    ASSERT_TRUE(split);
    EXPECT_EQ(split->members[0].second->ranks, (std::vector<int>{0, 1}));
    // a color that is neither: refused
    EXPECT_FALSE(reg.Split(world, 0, 12345, 0));
    EXPECT_THROW(reg.Split(world, 1, 12345, 1), CollectiveError);
}
