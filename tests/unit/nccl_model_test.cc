// The NCCL model's plans: textbook volumes per rank, protocol inflation, channel split,
// chunk bounds, and the tuning model's choices and overrides.
#include "nccl/plan.h"
#include "nccl/tuning.h"

#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>

namespace nccl = phantora::nccl;

namespace
{

/// Wire bytes each rank sends in \p plan.
std::map<uint32_t, uint64_t> SentPerRank(const nccl::Plan& plan)
{
    std::map<uint32_t, uint64_t> sent;
    for (const auto& t : plan.transfers)
    {
        sent[t.src] += t.bytes;
    }
    return sent;
}

nccl::Config Forced(const char* algo, const char* proto, uint32_t channels)
{
    nccl::Config c;
    c.algorithm = algo;
    c.protocol = proto;
    c.minChannels = channels;
    c.maxChannels = channels;
    c.chunkBytes = 64 * 1024;
    c.maxChunksPerChannel = 8;
    return c;
}

nccl::CommShape OneNode(uint32_t n)
{
    return nccl::CommShape{n, n};
}

} // namespace

TEST(NcclModel, EachRankSendsTheTextbookVolumeOfEveryCollective)
{
    const uint64_t B = 64ULL << 20; // divisible by every n, channel and chunk count here
    for (uint32_t n : {2U, 4U, 8U})
    {
        const nccl::Config c = Forced("ring", "simple", 4);
        struct Case
        {
            nccl::CollectiveKind kind;
            uint64_t perRank; // bytes each (sending) rank puts on the wire
        };
        for (const Case& k : {Case{nccl::CollectiveKind::AllReduce, 2 * (n - 1) * (B / n)},
                              Case{nccl::CollectiveKind::AllGather, (n - 1) * (B / n)},
                              Case{nccl::CollectiveKind::ReduceScatter, (n - 1) * (B / n)},
                              Case{nccl::CollectiveKind::AllToAll, (n - 1) * (B / n)}})
        {
            const nccl::Plan plan = nccl::MakePlan(k.kind, OneNode(n), B, c);
            const auto sent = SentPerRank(plan);
            ASSERT_EQ(sent.size(), n) << nccl::CollectiveName(k.kind);
            for (const auto& [rank, bytes] : sent)
            {
                ASSERT_EQ(bytes, k.perRank)
                    << nccl::CollectiveName(k.kind) << " n=" << n << " rank " << rank;
            }
        }
        // broadcast and reduce: a chain, the whole buffer over each of its n-1 edges
        for (auto kind : {nccl::CollectiveKind::Broadcast, nccl::CollectiveKind::Reduce})
        {
            const nccl::Plan plan = nccl::MakePlan(kind, OneNode(n), B, c);
            const auto sent = SentPerRank(plan);
            ASSERT_EQ(sent.size(), n - 1) << "every rank but the chain's end sends";
            for (const auto& [rank, bytes] : sent)
            {
                ASSERT_EQ(bytes, B) << nccl::CollectiveName(kind);
            }
        }
    }
    const nccl::Plan p2p =
        nccl::MakePlan(nccl::CollectiveKind::SendRecv, OneNode(2), B, Forced("ring", "simple", 2));
    ASSERT_EQ(SentPerRank(p2p)[0], B) << "send/recv moves the buffer once";
    ASSERT_EQ(SentPerRank(p2p).count(1), 0U) << "the receiver sends nothing";
}

TEST(NcclModel, LlDoublesTheWireBytesLl128AddsEightIn128)
{
    ASSERT_EQ(nccl::WireBytes(nccl::Protocol::LL, 4096), 8192U) << "LL";
    ASSERT_EQ(nccl::WireBytes(nccl::Protocol::LL128, 120 * 1024), 128U * 1024) << "LL128";
    ASSERT_EQ(nccl::WireBytes(nccl::Protocol::Simple, 4096), 4096U) << "Simple";
    const uint64_t B = 30ULL << 20;
    const auto simple = SentPerRank(nccl::MakePlan(nccl::CollectiveKind::AllReduce, OneNode(4), B,
                                                   Forced("ring", "simple", 2)));
    const auto ll = SentPerRank(
        nccl::MakePlan(nccl::CollectiveKind::AllReduce, OneNode(4), B, Forced("ring", "ll", 2)));
    const auto ll128 = SentPerRank(
        nccl::MakePlan(nccl::CollectiveKind::AllReduce, OneNode(4), B, Forced("ring", "ll128", 2)));
    ASSERT_EQ(ll.at(0), 2 * simple.at(0)) << "LL on the wire";
    ASSERT_EQ(ll128.at(0), simple.at(0) * 128 / 120) << "LL128 on the wire";
}

TEST(NcclModel, ChannelsSplitTheDataEvenlyChunksAreBoundedStepsPipeline)
{
    const uint32_t n = 4;
    const uint64_t B = 1ULL << 30;
    nccl::Config c = Forced("ring", "simple", 8);
    c.maxChunksPerChannel = 16;
    const nccl::Plan plan = nccl::MakePlan(nccl::CollectiveKind::AllReduce, OneNode(n), B, c);
    ASSERT_EQ(plan.nChannels, 8U) << "forced channel count";
    ASSERT_EQ(plan.chunksPerChannel, 16U) << "1 GiB hits the chunk bound";
    ASSERT_EQ(plan.transfers.size(), 8U * 16 * 2 * (n - 1) * n)
        << "channels x chunks x steps x ranks";
    std::map<uint32_t, uint64_t> perChannel;
    for (const auto& t : plan.transfers)
    {
        perChannel[t.channel] += t.bytes;
        ASSERT_EQ(t.dst, (t.src + 1) % n) << "ring successor";
    }
    ASSERT_EQ(perChannel.size(), 8U) << "every channel used";
    for (const auto& [ch, bytes] : perChannel)
    {
        ASSERT_EQ(bytes, perChannel.at(0)) << "equal share per channel";
    }
    // A small buffer gets one chunk: the old one-chunk-per-step ring.
    const nccl::Plan small = nccl::MakePlan(nccl::CollectiveKind::AllReduce, OneNode(n), 4096,
                                            Forced("ring", "simple", 1));
    ASSERT_EQ(small.transfers.size(), 2U * (n - 1) * n) << "one chunk";
    ASSERT_EQ(small.transfers[0].deps.size(), 0U) << "step 0 starts at once";
    for (uint32_t i = n; i < small.transfers.size(); ++i)
    {
        ASSERT_FALSE(small.transfers[i].deps.empty()) << "later steps wait";
    }
    // automatic channel count grows with the size, within [min, max]
    nccl::Config a;
    a.minChannels = 2;
    a.maxChannels = 12;
    a.minBytesPerChannel = 1 << 20;
    ASSERT_EQ(nccl::ChannelsFor(a, 1024), 2U) << "min channels";
    ASSERT_EQ(nccl::ChannelsFor(a, 5 << 20), 5U) << "1 MiB per channel";
    ASSERT_EQ(nccl::ChannelsFor(a, 1ULL << 30), 12U) << "max channels";
    // NCCL weighs the whole buffer against threads x threshold, LL's threshold scaled by the
    // ring's rank count: one rank's share against LL's 4 KiB, for every collective
    using K = nccl::CollectiveKind;
    ASSERT_EQ(nccl::ChannelBasisBytes(K::AllReduce, 4, 32 << 10), 8U << 10);
    ASSERT_EQ(nccl::ChannelBasisBytes(K::Broadcast, 2, 16 << 10), 8U << 10);
    ASSERT_EQ(nccl::ChannelBasisBytes(K::AllGather, 4, 8 << 10), 2U << 10);
    a.minChannels = 1;
    a.maxChannels = 24;
    a.minBytesPerChannel = 4 << 10;
    const nccl::CommShape four{4, 4};
    // the 4-GPU node's log: a second channel at 32 KiB for an all-reduce and for an
    // all-gather of a 32 KiB buffer (NCCL logs the latter as "AllGather: 8192 Bytes": one
    // rank's share)
    ASSERT_EQ(nccl::Choose(K::AllReduce, four, 32 << 10, a).nChannels, 2U);
    ASSERT_EQ(nccl::Choose(K::AllReduce, four, 16 << 10, a).nChannels, 1U);
    ASSERT_EQ(nccl::Choose(K::AllGather, four, 32 << 10, a).nChannels, 2U);
    ASSERT_EQ(nccl::Choose(K::AllGather, four, 16 << 10, a).nChannels, 1U);
    // Simple keeps a channel per 32 KiB (512 threads x 64), LL128 per 5 KiB (640 x 8)
    ASSERT_EQ(nccl::ChannelBasisBytes(K::AllReduce, 4, 64 << 10, nccl::Protocol::Simple), 8U << 10);
    ASSERT_EQ(nccl::ChannelBasisBytes(K::AllReduce, 4, 5 << 10, nccl::Protocol::LL128), 4U << 10);
}

// NCCL 2.28 prints its tuning table at init (NCCL_DEBUG_SUBSYS=TUNING); on the 4 x H200 node
// (ring graph 12 channels x 30 GB/s, tests/data/h200x4-nvlink/nccl_logs) it reads, ring,
// latency us / algorithm bandwidth GB/s:
//   4 ranks AllReduce  LL 10.2/94.0  LL128 25.4/220.8  Simple 28.8/240.0
//   4 ranks AllGather  LL  8.4/188.0 LL128 19.7/441.6  Simple 18.6/480.0
//   2 ranks AllReduce  LL  7.8/141.0 LL128 17.8/331.2  Simple 15.2/360.0
//   Broadcast (2 or 4) LL  7.2/141.0 LL128 15.9/331.2  Simple 11.8/360.0
TEST(NcclModel, RingTableIsNcclsOwnAndPicksWhatItsLogShows)
{
    using K = nccl::CollectiveKind;
    using P = nccl::Protocol;
    nccl::Config c;
    c.maxChannels = 24;
    c.ringGraphBytesPerSecond = 360e9;
    c.ringGraphChannels = 12;
    // the table's time for 1 GB (1e9 bytes): latency + 1e9 / bandwidth
    const auto us = [&](K k, uint32_t n, P p)
    { return nccl::NcclRingTableNs(k, n, 1e9, p, c) / 1e3; };
    const auto expect = [&](K k, uint32_t n, P p, double lat, double gbps)
    { EXPECT_NEAR(us(k, n, p), lat + 1e6 / gbps, 0.01) << nccl::CollectiveName(k) << " n=" << n; };
    expect(K::AllReduce, 4, P::LL, 10.2, 94.0);
    expect(K::AllReduce, 4, P::LL128, 25.4, 220.8);
    expect(K::AllReduce, 4, P::Simple, 28.8, 240.0);
    expect(K::AllGather, 4, P::LL, 8.4, 188.0);
    expect(K::AllGather, 4, P::LL128, 19.7, 441.6);
    expect(K::AllGather, 4, P::Simple, 18.6, 480.0);
    expect(K::AllReduce, 2, P::LL, 7.8, 141.0);
    expect(K::AllReduce, 2, P::LL128, 17.8, 331.2);
    expect(K::AllReduce, 2, P::Simple, 15.2, 360.0);
    expect(K::Broadcast, 4, P::LL, 7.2, 141.0);
    expect(K::Broadcast, 2, P::LL128, 15.9, 331.2);
    expect(K::Broadcast, 4, P::Simple, 11.8, 360.0);
    // and its choices as the log has them: LL128 for a 4-rank all-reduce at 4-8 MiB only,
    // Simple from 2 MiB on 2 ranks, an all-gather of a 4 MiB buffer on Simple
    const nccl::CommShape two{2, 2};
    const nccl::CommShape four{4, 4};
    EXPECT_EQ(nccl::Choose(K::AllReduce, four, 2 << 20, c).protocol, P::LL);
    EXPECT_EQ(nccl::Choose(K::AllReduce, four, 4 << 20, c).protocol, P::LL128);
    EXPECT_EQ(nccl::Choose(K::AllReduce, four, 8 << 20, c).protocol, P::LL128);
    EXPECT_EQ(nccl::Choose(K::AllReduce, four, 16 << 20, c).protocol, P::Simple);
    EXPECT_EQ(nccl::Choose(K::AllReduce, two, 1 << 20, c).protocol, P::LL);
    EXPECT_EQ(nccl::Choose(K::AllReduce, two, 2 << 20, c).protocol, P::Simple);
    EXPECT_EQ(nccl::Choose(K::AllGather, four, 2 << 20, c).protocol, P::LL);
    EXPECT_EQ(nccl::Choose(K::AllGather, four, 4 << 20, c).protocol, P::Simple);
    // across nodes NCCL's table has other terms: the model's own estimate decides there
    EXPECT_FALSE(nccl::RingTableApplies(K::AllReduce, nccl::CommShape{8, 4}, c));
    EXPECT_FALSE(nccl::RingTableApplies(K::SendRecv, four, c));
}

TEST(NcclModel, EachProtocolPipelinesInItsOwnSlices)
{
    nccl::Config c;
    c.chunkBytes = 512 << 10;
    c.maxChunksPerChannel = 64;
    c.ll.chunkBytes = 32 << 10;
    EXPECT_EQ(c.ChunkBytes(nccl::Protocol::LL), 32U << 10);
    EXPECT_EQ(c.ChunkBytes(nccl::Protocol::Simple), 512U << 10) << "0: the config's";
    const nccl::CommShape two{2, 2};
    const auto plan = [&](nccl::Protocol p)
    {
        return nccl::MakePlan(nccl::CollectiveKind::Broadcast, two, 1 << 20, c,
                              {nccl::Algorithm::Ring, p, 1, 0});
    };
    EXPECT_EQ(plan(nccl::Protocol::LL).chunksPerChannel, 32U) << "1 MiB in 32 KiB slices";
    EXPECT_EQ(plan(nccl::Protocol::Simple).chunksPerChannel, 2U) << "1 MiB in 512 KiB slices";
}

TEST(NcclModel, TreeAllReduceGoesUpAndDownADoubleBinaryTreeAcrossNodes)
{
    const nccl::CommShape shape{16, 4}; // 4 nodes of 4
    const uint64_t B = 8ULL << 20;
    const nccl::Plan plan =
        nccl::MakePlan(nccl::CollectiveKind::AllReduce, shape, B, Forced("tree", "simple", 2));
    ASSERT_EQ(plan.algorithm, "tree") << "tree across nodes";
    // every rank but the root sends its channel share up once and receives it down once
    uint64_t up = 0;
    for (const auto& t : plan.transfers)
    {
        up += t.bytes;
    }
    ASSERT_EQ(up, 2 * 15 * B) << "(n-1) edges, up and down, per channel share";
    for (uint32_t ch = 0; ch < 2; ++ch)
    {
        std::set<uint32_t> sendsUp;
        for (const auto& t : plan.transfers)
        {
            if (t.channel == ch && t.deps.empty())
            {
                sendsUp.insert(t.src); // leaves start at once
            }
        }
        ASSERT_FALSE(sendsUp.empty()) << "leaves exist";
    }
    // inside one node a tree is a ring
    const nccl::Plan one =
        nccl::MakePlan(nccl::CollectiveKind::AllReduce, OneNode(4), B, Forced("tree", "simple", 2));
    ASSERT_EQ(one.algorithm, "ring") << "one node";
}

TEST(NcclModel, AutomaticChoiceIsLlWhenTinySimpleWhenHugeAndOverridesWin)
{
    const nccl::Config c; // NCCL's orders of magnitude
    const auto tiny = nccl::Choose(nccl::CollectiveKind::AllReduce, OneNode(8), 1024, c);
    ASSERT_EQ(nccl::ProtocolName(tiny.protocol), std::string("ll")) << "tiny -> LL";
    ASSERT_EQ(tiny.nChannels, c.minChannels) << "tiny -> few channels";
    const auto huge = nccl::Choose(nccl::CollectiveKind::AllReduce, OneNode(8), 1ULL << 30, c);
    ASSERT_EQ(nccl::ProtocolName(huge.protocol), std::string("simple")) << "huge -> Simple";
    ASSERT_EQ(huge.nChannels, c.maxChannels) << "huge -> all channels";
    ASSERT_EQ(nccl::AlgorithmName(huge.algorithm), std::string("ring")) << "one node -> ring";
    const auto multi =
        nccl::Choose(nccl::CollectiveKind::AllReduce, nccl::CommShape{64, 8}, 1024, c);
    ASSERT_EQ(nccl::AlgorithmName(multi.algorithm), std::string("tree"))
        << "tiny across 8 nodes -> tree (log depth beats 126 ring steps)";

    nccl::Config forced;
    forced.algorithm = "ring";
    forced.protocol = "ll128";
    forced.minChannels = 3;
    forced.maxChannels = 3;
    const auto f =
        nccl::Choose(nccl::CollectiveKind::AllReduce, nccl::CommShape{64, 8}, 1024, forced);
    ASSERT_EQ(nccl::AlgorithmName(f.algorithm), std::string("ring")) << "NCCL_ALGO";
    ASSERT_EQ(nccl::ProtocolName(f.protocol), std::string("ll128")) << "NCCL_PROTO";
    ASSERT_EQ(f.nChannels, 3U) << "NCCL_MIN/MAX_NCHANNELS";
    const nccl::Plan plan =
        nccl::MakePlan(nccl::CollectiveKind::AllGather, OneNode(4), 1 << 20, forced);
    ASSERT_EQ(plan.protocol, "ll128") << "the plan follows the override";
    ASSERT_EQ(plan.nChannels, 3U) << "channels follow the override";
    ASSERT_EQ(plan.fixedLatency,
              nccl::Picoseconds(static_cast<int64_t>(forced.ll128.baseLatencyNs * 1000)))
        << "the protocol's base latency";
    ASSERT_EQ(plan.transfers[0].delay,
              nccl::Picoseconds(static_cast<int64_t>(forced.ll128.stepLatencyNs * 1000)))
        << "the protocol's step latency";
}

TEST(NcclModel, AcrossNodesEachChannelKeepsToOneRailAndTreesLeaveThroughEveryNic)
{
    const nccl::CommShape twoNodes{16, 8};
    nccl::Config c = Forced("ring", "simple", 8);
    const nccl::Plan ring = nccl::MakePlan(nccl::CollectiveKind::AllReduce, twoNodes, 64 << 20, c);
    std::set<uint32_t> railsUsed;
    for (const auto& t : ring.transfers)
    {
        if (t.src / 8 != t.dst / 8)
        {
            ASSERT_EQ(t.src % 8, t.dst % 8)
                << "a ring hop between servers stays on its rail (channel " << t.channel << ": "
                << t.src << " -> " << t.dst << ")";
            railsUsed.insert(t.src % 8);
        }
    }
    ASSERT_EQ(railsUsed.size(), 8U) << "8 channels spread over all 8 rails";

    c.algorithm = "tree";
    const nccl::Plan tree = nccl::MakePlan(nccl::CollectiveKind::AllReduce, twoNodes, 64 << 20, c);
    std::set<uint32_t> nics;
    for (const auto& t : tree.transfers)
    {
        if (t.src / 8 != t.dst / 8)
        {
            ASSERT_EQ(t.src % 8, t.dst % 8) << "tree edges between servers too";
            nics.insert(t.src % 8);
        }
    }
    ASSERT_EQ(nics.size(), 4U) << "8 channels = 4 tree pairs, 4 NICs";
}
