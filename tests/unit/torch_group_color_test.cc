#include "engine/torch_group_color.h"

#include <gtest/gtest.h>

using namespace phantora;

// Known answers: torch.distributed.distributed_c10d._process_group_color(list(ranks)) as
// Python 3.11 with torch 2.11 prints it (abs(hash(tuple(ranks))) % 2**31).
TEST(TorchGroupColor, MatchesTorchsColorOfAGroupsRanks)
{
    EXPECT_EQ(TorchGroupColor({0}), 59908776);
    EXPECT_EQ(TorchGroupColor({0, 1}), 2130503744);
    EXPECT_EQ(TorchGroupColor({0, 8}), 1349684122);
    EXPECT_EQ(TorchGroupColor({1, 9, 17}), 20891907);
    EXPECT_EQ(TorchGroupColor({3}), 1301067556);
}
