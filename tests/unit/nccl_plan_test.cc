// The textbook ring all-reduce plan.
#include "nccl/plan.h"

#include <gtest/gtest.h>
#include <stdexcept>
#include <vector>

namespace nccl = phantora::nccl;

TEST(NcclPlan, RingAllReduceHasTwoNMinusOneStepsOfOneNthOfTheBufferPerRank)
{
    for (uint32_t n : {2U, 3U, 4U, 8U})
    {
        nccl::Plan plan = nccl::MakeRingAllReducePlan(n, 1 << 20);
        ASSERT_EQ(plan.transfers.size(), 2 * (n - 1) * n) << "transfer count";
        for (uint32_t i = 0; i < plan.transfers.size(); ++i)
        {
            const auto& t = plan.transfers[i];
            ASSERT_EQ(t.dst, (t.src + 1) % n) << "ring successor";
            ASSERT_EQ(t.bytes, ((1U << 20) + n - 1) / n) << "chunk size";
            ASSERT_EQ(t.deps.size(), (i < n ? 0U : 1U)) << "one dependency after step 0";
        }
    }
    ASSERT_EQ(nccl::MakeRingAllReducePlan(1, 100).transfers.size(), 0U) << "single rank";
}

namespace
{

nccl::Config NvlsConfig()
{
    nccl::Config c;
    c.nvlsEnable = true;
    c.nvlsChannels = 4;
    c.nvls.chunkBytes = 64 * 1024;
    c.maxChunksPerChannel = 2;
    c.nvls.channelBytesPerSecond = 20e9;
    return c;
}

} // namespace

TEST(NcclPlan, NvlsAllReduceSendsEachRanksBufferOnceUpAndOnceDownThroughTheSwitch)
{
    const nccl::CommShape node{8, 8};
    const uint64_t bytes = 64ULL << 20;
    const nccl::Config c = NvlsConfig();
    const nccl::Choice choice{nccl::Algorithm::Nvls, nccl::Protocol::Simple, c.nvlsChannels};
    const nccl::Plan plan = nccl::MakePlan(nccl::CollectiveKind::AllReduce, node, bytes, c, choice);
    EXPECT_EQ(plan.algorithm, "nvls");
    // per channel, step and head: one reduce (8 -> head) and one multicast (head -> 8)
    ASSERT_EQ(plan.transfers.size(), 4U * 2 * 8 * 2);
    std::vector<uint64_t> up(8, 0);
    std::vector<uint64_t> down(8, 0);
    for (const nccl::Transfer& t : plan.transfers)
    {
        ASSERT_FALSE(t.switchSrcs.empty());
        ASSERT_FALSE(t.switchDsts.empty());
        EXPECT_TRUE(t.switchSrcs.size() == 8 || t.switchDsts.size() == 8);
        for (uint32_t r : t.switchSrcs)
        {
            up[r] += t.bytes;
        }
        for (uint32_t r : t.switchDsts)
        {
            down[r] += t.bytes;
        }
        EXPECT_GT(t.minDuration.count(), 0) << "the NVLS channel's SMs bound each step";
    }
    for (uint32_t r = 0; r < 8; ++r)
    {
        // its whole buffer up (the reduces) plus its own slices once more (its multicasts):
        // 9/8 of the buffer, where a ring sends 2 x 7/8
        EXPECT_EQ(up[r], bytes / 8 * 9) << "rank " << r;
        EXPECT_EQ(down[r], bytes / 8 * 9) << "rank " << r;
    }
}

TEST(NcclPlan, NvlsIsChosenForLargeOneNodeAllReducesOnlyWhereTheNodeHasIt)
{
    const nccl::CommShape node{8, 8};
    nccl::Config c = NvlsConfig();
    c.nvls.channelBytesPerSecond = 100e9; // 4 channels: 400 GB/s of buffer, above any ring here
    EXPECT_EQ(nccl::Choose(nccl::CollectiveKind::AllReduce, node, 1ULL << 30, c).algorithm,
              nccl::Algorithm::Nvls);
    EXPECT_EQ(nccl::Choose(nccl::CollectiveKind::AllReduce, node, 1ULL << 30, c).nChannels,
              c.nvlsChannels);
    // never across nodes (NVLS-tree is not modelled), never for broadcast
    EXPECT_NE(nccl::Choose(nccl::CollectiveKind::AllReduce, {16, 8}, 1ULL << 30, c).algorithm,
              nccl::Algorithm::Nvls);
    EXPECT_NE(nccl::Choose(nccl::CollectiveKind::Broadcast, node, 1ULL << 30, c).algorithm,
              nccl::Algorithm::Nvls);
    c.protocol = "ll";
    EXPECT_NE(nccl::Choose(nccl::CollectiveKind::AllReduce, node, 1ULL << 30, c).algorithm,
              nccl::Algorithm::Nvls)
        << "NVLS runs Simple only";
    c.protocol = "";
    c.nvlsEnable = false;
    EXPECT_EQ(nccl::Choose(nccl::CollectiveKind::AllReduce, node, 1ULL << 30, c).algorithm,
              nccl::Algorithm::Ring);
    c.algorithm = "nvls";
    EXPECT_THROW(nccl::Choose(nccl::CollectiveKind::AllReduce, node, 1ULL << 30, c),
                 std::invalid_argument)
        << "NCCL_ALGO=NVLS where NVLS is off: no algorithm available, as NCCL says";
}
