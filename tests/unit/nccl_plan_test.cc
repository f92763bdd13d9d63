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
    // never across nodes (that is NVLS-tree's), never for broadcast
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

TEST(NcclPlan, NvlsTreeReducesInTheSwitchAndSendsOneShareOfTheBufferPerNicUpAndDownTheTree)
{
    const uint64_t bytes = 64ULL << 20;
    const nccl::Config c = NvlsConfig();
    const nccl::Choice choice{nccl::Algorithm::NvlsTree, nccl::Protocol::Simple, c.nvlsChannels};
    for (uint32_t nodes : {2U, 4U})
    {
        const nccl::CommShape shape{nodes * 8, 8};
        const nccl::Plan plan =
            nccl::MakePlan(nccl::CollectiveKind::AllReduce, shape, bytes, c, choice);
        EXPECT_EQ(plan.algorithm, "nvlstree");
        std::vector<uint64_t> nvlinkUp(shape.nRanks, 0);
        std::vector<uint64_t> netOut(shape.nRanks, 0);
        std::vector<uint64_t> netIn(shape.nRanks, 0);
        for (const nccl::Transfer& t : plan.transfers)
        {
            if (t.switchSrcs.empty())
            {
                // a network hop: head j of one node to head j of another (its own NIC)
                ASSERT_NE(t.src / 8, t.dst / 8) << "between nodes";
                ASSERT_EQ(t.src % 8, t.dst % 8) << "same head index, same rail";
                netOut[t.src] += t.bytes;
                netIn[t.dst] += t.bytes;
                continue;
            }
            for (uint32_t r : t.switchSrcs)
            {
                ASSERT_EQ(r / 8, t.switchSrcs.front() / 8) << "the switch of one node";
                nvlinkUp[r] += t.bytes;
            }
        }
        uint64_t totalNet = 0;
        for (uint32_t r = 0; r < shape.nRanks; ++r)
        {
            // the node's switch takes every rank's whole buffer (plus its own share again
            // as the head that multicasts it), as single-node NVLS
            EXPECT_EQ(nvlinkUp[r], bytes / 8 * 9) << "rank " << r;
            totalNet += netOut[r];
            EXPECT_EQ(netOut[r], netIn[r]) << "as much up as down, rank " << r;
        }
        // every node but the root of each tree sends its 1/8 shares up and gets them down:
        // (nodes - 1) x the buffer over all NICs each way
        EXPECT_EQ(totalNet, 2 * (nodes - 1) * bytes) << nodes << " nodes";
    }
    EXPECT_THROW(nccl::MakePlan(nccl::CollectiveKind::AllReduce, {8, 8}, bytes, c, choice),
                 std::invalid_argument)
        << "NCCL disables NVLSTree on one node";
    EXPECT_THROW(nccl::MakePlan(nccl::CollectiveKind::AllGather, {16, 8}, bytes, c, choice),
                 std::invalid_argument)
        << "all-reduce only";
}

TEST(NcclPlan, AcrossNvlsNodesNcclsChoiceGoesTreeRingNvlsTreeAsTheSizeGrows)
{
    // 8-GPU NVSwitch nodes with one 400 Gb/s NIC per GPU, the H100 node's channels and rates.
    nccl::Config c;
    c.simple.channelBytesPerSecond = 15.1e9;
    c.nvlsEnable = true;
    c.nvlsChannels = 16;
    c.nvls.channelBytesPerSecond = 17.5e9;
    c.maxChannels = 24;
    c.netBytesPerSecond = 50e9;
    for (uint32_t nodes : {2U, 16U})
    {
        const nccl::CommShape shape{nodes * 8, 8};
        const auto pick = [&](uint64_t b)
        { return nccl::Choose(nccl::CollectiveKind::AllReduce, shape, b, c).algorithm; };
        EXPECT_EQ(pick(1ULL << 30), nccl::Algorithm::NvlsTree) << nodes << " nodes, 1 GiB";
        EXPECT_NE(pick(4096), nccl::Algorithm::NvlsTree)
            << nodes << " nodes, 4 KiB: NVLSTree's 25 us + network hops lose";
        c.nvlsEnable = false;
        EXPECT_NE(pick(1ULL << 30), nccl::Algorithm::NvlsTree) << "NCCL_NVLS_ENABLE=0";
        c.nvlsEnable = true;
        c.algorithm = "^nvlstree";
        EXPECT_NE(pick(1ULL << 30), nccl::Algorithm::NvlsTree) << "NCCL_ALGO=^NVLSTree";
        c.algorithm = "NVLSTree";
        EXPECT_EQ(pick(4096), nccl::Algorithm::NvlsTree) << "NCCL_ALGO=NVLSTree forces it";
        c.algorithm = "";
    }
    // The network bounds NVLS-tree beyond two nodes: each NIC carries a share twice
    // (inner nodes of the tree), so 1 GiB takes longer on 16 nodes than on 2.
    const double two = nccl::EstimateNs(nccl::CollectiveKind::AllReduce, {16, 8}, 1ULL << 30,
                                        nccl::Algorithm::NvlsTree, nccl::Protocol::Simple, 16, c);
    const double many = nccl::EstimateNs(nccl::CollectiveKind::AllReduce, {128, 8}, 1ULL << 30,
                                         nccl::Algorithm::NvlsTree, nccl::Protocol::Simple, 16, c);
    EXPECT_GT(many, two * 1.3);
}

TEST(NcclPlan, BackToBackRepeatsThePlanAndMarksWhereEachCallStarts)
{
    nccl::Plan one = nccl::MakeRingAllReducePlan(3, 3 << 10);
    const auto size = static_cast<uint32_t>(one.transfers.size());
    const nccl::Plan three = nccl::BackToBack(one, 3);
    ASSERT_EQ(three.transfers.size(), 3U * size);
    EXPECT_EQ(three.callStarts, (std::vector<uint32_t>{0, size, 2 * size}));
    for (uint32_t i = 0; i < size; ++i)
    {
        const auto& first = three.transfers[i];
        const auto& third = three.transfers[2 * size + i];
        EXPECT_EQ(third.src, first.src);
        EXPECT_EQ(third.bytes, first.bytes);
        ASSERT_EQ(third.deps.size(), first.deps.size());
        for (std::size_t d = 0; d < first.deps.size(); ++d)
        {
            EXPECT_EQ(third.deps[d], first.deps[d] + 2 * size) << "deps stay inside their call";
        }
    }
    EXPECT_THROW(nccl::BackToBack(one, 0), std::invalid_argument);
    EXPECT_THROW(nccl::BackToBack(three, 2), std::invalid_argument);
}

namespace
{

/// NCCL's p2p setup as the 4 x H200 node logs it: 32 p2p channels, 32 per peer, 512 KiB.
nccl::Config P2pConfig()
{
    nccl::Config c;
    c.p2pChannels = 32;
    c.p2pChannelsPerPeer = 32;
    c.p2pChunkBytes = 512 * 1024;
    return c;
}

} // namespace

TEST(NcclPlan, SendRecvTakesNcclsP2pChannelsAndProtocolForItsSizeAndRankCount)
{
    const nccl::Config c = P2pConfig();
    const nccl::CommShape two{2, 2};
    const nccl::CommShape four{4, 4};
    constexpr uint64_t kKiB = 1024;
    constexpr uint64_t kMiB = 1024 * kKiB;
    // One channel per 64 KiB (the chunk / 8) up to the per-rank cap: 16 of 32 on 2 ranks
    // (16 x 2 <= 32), 8 on 4; then doubled while a channel carries more than 16 MiB.
    EXPECT_EQ(nccl::P2pChannels(two, 16 * kKiB, c), 1U);
    EXPECT_EQ(nccl::P2pChannels(two, 128 * kKiB, c), 2U);
    EXPECT_EQ(nccl::P2pChannels(two, 1 * kMiB, c), 16U);
    EXPECT_EQ(nccl::P2pChannels(two, 256 * kMiB, c), 16U);
    EXPECT_EQ(nccl::P2pChannels(two, 512 * kMiB, c), 32U);
    EXPECT_EQ(nccl::P2pChannels(four, 1 * kMiB, c), 8U);
    EXPECT_EQ(nccl::P2pChannels(four, 128 * kMiB, c), 8U);
    EXPECT_EQ(nccl::P2pChannels(four, 256 * kMiB, c), 16U);
    EXPECT_EQ(nccl::P2pChannels(four, 4096 * kMiB, c), 32U);
    EXPECT_EQ(nccl::P2pChannels(two, 0, c), 1U);
    // Across nodes a channel takes at least half a chunk and at most one.
    EXPECT_EQ(nccl::P2pChannels(nccl::CommShape{16, 8}, 1 * kMiB, c), 2U);
    // LL while a channel carries at most 16 KiB, Simple beyond.
    const auto choose = [&](const nccl::CommShape& s, uint64_t bytes)
    { return nccl::Choose(nccl::CollectiveKind::SendRecv, s, bytes, c); };
    EXPECT_EQ(choose(two, 16 * kKiB).protocol, nccl::Protocol::LL);
    EXPECT_EQ(choose(two, 32 * kKiB).protocol, nccl::Protocol::Simple);
    EXPECT_EQ(choose(four, 128 * kMiB).nChannels, 8U);
    nccl::Config forced = c;
    forced.protocol = "ll";
    EXPECT_EQ(nccl::Choose(nccl::CollectiveKind::SendRecv, two, 1 * kMiB, forced).protocol,
              nccl::Protocol::LL);
    // Without NCCL's p2p setup the collective rule stays (up to max_channels).
    EXPECT_EQ(nccl::Choose(nccl::CollectiveKind::SendRecv, two, 1 * kMiB, nccl::Config{}).nChannels,
              16U);
}
