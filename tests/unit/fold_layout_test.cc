#include "engine/fold_layout.h"

#include <gtest/gtest.h>
#include <stdexcept>

using namespace phantora;

// Megatron's tp-cp-ep-dp-pp order with TP 2, DP 3, PP 2: rank = tp + 2 dp + 6 pp.
TEST(FoldLayout, ReplicasOfACoordinateAreStrideApart)
{
    const FoldLayout fold(12, 3, 2);
    EXPECT_TRUE(fold.Folds());
    EXPECT_EQ(fold.LiveCount(), 4);
    EXPECT_EQ(fold.LiveRanks(), (std::vector<int>{0, 1, 6, 7}));
    EXPECT_EQ(fold.ReplicaOf(9), 1); // tp 1, dp 1, pp 1
    EXPECT_EQ(fold.Representative(9), 7);
    EXPECT_EQ(fold.InReplica(7, 2), 11);
    EXPECT_FALSE(fold.IsLive(4));
}

TEST(FoldLayout, NoFoldKeepsEveryRankLive)
{
    const FoldLayout& none = FoldLayout::None();
    EXPECT_FALSE(none.Folds());
    EXPECT_TRUE(none.IsLive(1023));
    EXPECT_EQ(none.Representative(1023), 1023);
}

TEST(FoldLayout, AWorldTheDimensionsDoNotDivideIsRefused)
{
    EXPECT_THROW(FoldLayout(10, 4, 1), std::invalid_argument);
    EXPECT_THROW(FoldLayout(16, 4, 8), std::invalid_argument);
    EXPECT_THROW(FoldLayout(16, 0, 1), std::invalid_argument);
}
