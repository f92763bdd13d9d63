#include "nccl_group.h"

#include <gtest/gtest.h>
#include <thread>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

wire::P2POp Send(int peer, uint64_t bytes)
{
    return wire::P2POp{peer, bytes, true};
}

wire::P2POp Recv(int peer, uint64_t bytes)
{
    return wire::P2POp{peer, bytes, false};
}

} // namespace

TEST(NcclGroup, EndWithoutStartIsRefused)
{
    NcclGroup g;
    EXPECT_FALSE(g.Open());
    EXPECT_FALSE(g.End().has_value());
}

TEST(NcclGroup, BatchesByCommunicatorAndStreamInFirstAppearanceAtTheOutermostEnd)
{
    NcclGroup g;
    g.Start();
    g.Add(1, 0x1000, Send(1, 8));
    g.Add(2, 0x1000, Recv(0, 16));
    g.Add(1, 0x1000, Recv(1, 32));
    g.Start(); // nested
    g.Add(1, 0x1010, Send(2, 64));
    const auto inner = g.End();
    ASSERT_TRUE(inner.has_value());
    EXPECT_TRUE(inner->empty()); // still inside the outer group
    EXPECT_TRUE(g.Open());

    const auto outer = g.End();
    ASSERT_TRUE(outer.has_value());
    ASSERT_EQ(outer->size(), 3U);
    EXPECT_EQ((*outer)[0].comm, 1U);
    EXPECT_EQ((*outer)[0].stream, 0x1000U);
    ASSERT_EQ((*outer)[0].ops.size(), 2U);
    EXPECT_TRUE((*outer)[0].ops[0].send);
    EXPECT_EQ((*outer)[0].ops[0].bytes, 8U);
    EXPECT_FALSE((*outer)[0].ops[1].send);
    EXPECT_EQ((*outer)[0].ops[1].bytes, 32U);
    EXPECT_EQ((*outer)[1].comm, 2U);
    EXPECT_EQ((*outer)[1].ops.size(), 1U);
    EXPECT_EQ((*outer)[2].comm, 1U);
    EXPECT_EQ((*outer)[2].stream, 0x1010U);
    EXPECT_EQ((*outer)[2].ops[0].peer, 2);

    EXPECT_FALSE(g.Open());
    EXPECT_FALSE(g.End().has_value());
    g.Start(); // a new group starts empty
    const auto next = g.End();
    ASSERT_TRUE(next.has_value());
    EXPECT_TRUE(next->empty());
}

TEST(NcclGroup, EachThreadHasItsOwn)
{
    NcclGroup::ThisThread().Start();
    bool otherOpen = true;
    std::thread([&] { otherOpen = NcclGroup::ThisThread().Open(); }).join();
    EXPECT_FALSE(otherOpen);
    EXPECT_TRUE(NcclGroup::ThisThread().Open());
    EXPECT_TRUE(NcclGroup::ThisThread().End().has_value());
}
