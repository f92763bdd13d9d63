// The NCCL model's plans: textbook volumes per rank, protocol inflation, channel split,
// chunk bounds, and the tuning model's choices and overrides.
#include "ns3/nccl-plan.h"
#include "ns3/nccl-tuning.h"
#include "ns3/test.h"

#include <map>
#include <set>

using namespace ns3;

namespace
{

/// Wire bytes each rank sends in \p plan.
std::map<uint32_t, uint64_t> SentPerRank(const NcclPlan& plan)
{
    std::map<uint32_t, uint64_t> sent;
    for (const auto& t : plan.transfers)
    {
        sent[t.src] += t.bytes;
    }
    return sent;
}

NcclConfig Forced(const char* algo, const char* proto, uint32_t channels)
{
    NcclConfig c;
    c.algorithm = algo;
    c.protocol = proto;
    c.minChannels = channels;
    c.maxChannels = channels;
    c.chunkBytes = 64 * 1024;
    c.maxChunksPerChannel = 8;
    return c;
}

NcclCommShape OneNode(uint32_t n)
{
    return NcclCommShape{n, n};
}

} // namespace

class NcclVolumeTestCase : public TestCase
{
public:
    NcclVolumeTestCase() : TestCase("each rank sends the textbook volume of every collective") {}

private:
    void DoRun() override
    {
        const uint64_t B = 64ULL << 20; // divisible by every n, channel and chunk count here
        for (uint32_t n : {2U, 4U, 8U})
        {
            const NcclConfig c = Forced("ring", "simple", 4);
            struct Case
            {
                NcclCollectiveKind kind;
                uint64_t perRank; // bytes each (sending) rank puts on the wire
            };
            for (const Case& k : {Case{NcclCollectiveKind::AllReduce, 2 * (n - 1) * (B / n)},
                                  Case{NcclCollectiveKind::AllGather, (n - 1) * (B / n)},
                                  Case{NcclCollectiveKind::ReduceScatter, (n - 1) * (B / n)},
                                  Case{NcclCollectiveKind::AllToAll, (n - 1) * (B / n)}})
            {
                const NcclPlan plan = MakeNcclPlan(k.kind, OneNode(n), B, c);
                const auto sent = SentPerRank(plan);
                NS_TEST_ASSERT_MSG_EQ(sent.size(), n, NcclCollectiveName(k.kind));
                for (const auto& [rank, bytes] : sent)
                {
                    NS_TEST_ASSERT_MSG_EQ(bytes, k.perRank,
                                          NcclCollectiveName(k.kind)
                                              << " n=" << n << " rank " << rank);
                }
            }
            // broadcast and reduce: a chain, the whole buffer over each of its n-1 edges
            for (auto kind : {NcclCollectiveKind::Broadcast, NcclCollectiveKind::Reduce})
            {
                const NcclPlan plan = MakeNcclPlan(kind, OneNode(n), B, c);
                const auto sent = SentPerRank(plan);
                NS_TEST_ASSERT_MSG_EQ(sent.size(), n - 1, "every rank but the chain's end sends");
                for (const auto& [rank, bytes] : sent)
                {
                    NS_TEST_ASSERT_MSG_EQ(bytes, B, NcclCollectiveName(kind));
                }
            }
        }
        const NcclPlan p2p =
            MakeNcclPlan(NcclCollectiveKind::SendRecv, OneNode(2), B, Forced("ring", "simple", 2));
        NS_TEST_ASSERT_MSG_EQ(SentPerRank(p2p)[0], B, "send/recv moves the buffer once");
        NS_TEST_ASSERT_MSG_EQ(SentPerRank(p2p).count(1), 0U, "the receiver sends nothing");
    }
};

class NcclProtocolTestCase : public TestCase
{
public:
    NcclProtocolTestCase() : TestCase("LL doubles the wire bytes, LL128 adds 8 in 128") {}

private:
    void DoRun() override
    {
        NS_TEST_ASSERT_MSG_EQ(NcclWireBytes(NcclProtocol::LL, 4096), 8192U, "LL");
        NS_TEST_ASSERT_MSG_EQ(NcclWireBytes(NcclProtocol::LL128, 120 * 1024), 128U * 1024, "LL128");
        NS_TEST_ASSERT_MSG_EQ(NcclWireBytes(NcclProtocol::Simple, 4096), 4096U, "Simple");
        const uint64_t B = 30ULL << 20;
        const auto simple = SentPerRank(MakeNcclPlan(NcclCollectiveKind::AllReduce, OneNode(4), B,
                                                     Forced("ring", "simple", 2)));
        const auto ll = SentPerRank(
            MakeNcclPlan(NcclCollectiveKind::AllReduce, OneNode(4), B, Forced("ring", "ll", 2)));
        const auto ll128 = SentPerRank(
            MakeNcclPlan(NcclCollectiveKind::AllReduce, OneNode(4), B, Forced("ring", "ll128", 2)));
        NS_TEST_ASSERT_MSG_EQ(ll.at(0), 2 * simple.at(0), "LL on the wire");
        NS_TEST_ASSERT_MSG_EQ(ll128.at(0), simple.at(0) * 128 / 120, "LL128 on the wire");
    }
};

class NcclChannelTestCase : public TestCase
{
public:
    NcclChannelTestCase()
        : TestCase("channels split the data evenly; chunks are bounded; steps pipeline")
    {
    }

private:
    void DoRun() override
    {
        const uint32_t n = 4;
        const uint64_t B = 1ULL << 30;
        NcclConfig c = Forced("ring", "simple", 8);
        c.maxChunksPerChannel = 16;
        const NcclPlan plan = MakeNcclPlan(NcclCollectiveKind::AllReduce, OneNode(n), B, c);
        NS_TEST_ASSERT_MSG_EQ(plan.nChannels, 8U, "forced channel count");
        NS_TEST_ASSERT_MSG_EQ(plan.chunksPerChannel, 16U, "1 GiB hits the chunk bound");
        NS_TEST_ASSERT_MSG_EQ(plan.transfers.size(), 8U * 16 * 2 * (n - 1) * n,
                              "channels x chunks x steps x ranks");
        std::map<uint32_t, uint64_t> perChannel;
        for (const auto& t : plan.transfers)
        {
            perChannel[t.channel] += t.bytes;
            NS_TEST_ASSERT_MSG_EQ(t.dst, (t.src + 1) % n, "ring successor");
        }
        NS_TEST_ASSERT_MSG_EQ(perChannel.size(), 8U, "every channel used");
        for (const auto& [ch, bytes] : perChannel)
        {
            NS_TEST_ASSERT_MSG_EQ(bytes, perChannel.at(0), "equal share per channel");
        }
        // A small buffer gets one chunk: the old one-chunk-per-step ring.
        const NcclPlan small = MakeNcclPlan(NcclCollectiveKind::AllReduce, OneNode(n), 4096,
                                            Forced("ring", "simple", 1));
        NS_TEST_ASSERT_MSG_EQ(small.transfers.size(), 2U * (n - 1) * n, "one chunk");
        NS_TEST_ASSERT_MSG_EQ(small.transfers[0].deps.size(), 0U, "step 0 starts at once");
        for (uint32_t i = n; i < small.transfers.size(); ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(small.transfers[i].deps.empty(), false, "later steps wait");
        }
        // automatic channel count grows with the size, within [min, max]
        NcclConfig a;
        a.minChannels = 2;
        a.maxChannels = 12;
        a.minBytesPerChannel = 1 << 20;
        NS_TEST_ASSERT_MSG_EQ(NcclChannelsFor(a, 1024), 2U, "min channels");
        NS_TEST_ASSERT_MSG_EQ(NcclChannelsFor(a, 5 << 20), 5U, "1 MiB per channel");
        NS_TEST_ASSERT_MSG_EQ(NcclChannelsFor(a, 1ULL << 30), 12U, "max channels");
    }
};

class NcclTreeTestCase : public TestCase
{
public:
    NcclTreeTestCase() : TestCase("tree all-reduce: up and down a double binary tree across nodes")
    {
    }

private:
    void DoRun() override
    {
        const NcclCommShape shape{16, 4}; // 4 nodes of 4
        const uint64_t B = 8ULL << 20;
        const NcclPlan plan =
            MakeNcclPlan(NcclCollectiveKind::AllReduce, shape, B, Forced("tree", "simple", 2));
        NS_TEST_ASSERT_MSG_EQ(plan.algorithm, "tree", "tree across nodes");
        // every rank but the root sends its channel share up once and receives it down once
        uint64_t up = 0;
        for (const auto& t : plan.transfers)
        {
            up += t.bytes;
        }
        NS_TEST_ASSERT_MSG_EQ(up, 2 * 15 * B, "(n-1) edges, up and down, per channel share");
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
            NS_TEST_ASSERT_MSG_EQ(sendsUp.empty(), false, "leaves exist");
        }
        // inside one node a tree is a ring
        const NcclPlan one =
            MakeNcclPlan(NcclCollectiveKind::AllReduce, OneNode(4), B, Forced("tree", "simple", 2));
        NS_TEST_ASSERT_MSG_EQ(one.algorithm, "ring", "one node");
    }
};

class NcclTuningTestCase : public TestCase
{
public:
    NcclTuningTestCase()
        : TestCase("automatic choice: LL when tiny, Simple when huge; overrides win")
    {
    }

private:
    void DoRun() override
    {
        const NcclConfig c; // NCCL's orders of magnitude
        const auto tiny = ChooseNccl(NcclCollectiveKind::AllReduce, OneNode(8), 1024, c);
        NS_TEST_ASSERT_MSG_EQ(NcclProtocolName(tiny.protocol), std::string("ll"), "tiny -> LL");
        NS_TEST_ASSERT_MSG_EQ(tiny.nChannels, c.minChannels, "tiny -> few channels");
        const auto huge = ChooseNccl(NcclCollectiveKind::AllReduce, OneNode(8), 1ULL << 30, c);
        NS_TEST_ASSERT_MSG_EQ(NcclProtocolName(huge.protocol), std::string("simple"),
                              "huge -> Simple");
        NS_TEST_ASSERT_MSG_EQ(huge.nChannels, c.maxChannels, "huge -> all channels");
        NS_TEST_ASSERT_MSG_EQ(NcclAlgorithmName(huge.algorithm), std::string("ring"),
                              "one node -> ring");
        const auto multi = ChooseNccl(NcclCollectiveKind::AllReduce, NcclCommShape{64, 8}, 1024, c);
        NS_TEST_ASSERT_MSG_EQ(NcclAlgorithmName(multi.algorithm), std::string("tree"),
                              "tiny across 8 nodes -> tree (log depth beats 126 ring steps)");

        NcclConfig forced;
        forced.algorithm = "ring";
        forced.protocol = "ll128";
        forced.minChannels = 3;
        forced.maxChannels = 3;
        const auto f =
            ChooseNccl(NcclCollectiveKind::AllReduce, NcclCommShape{64, 8}, 1024, forced);
        NS_TEST_ASSERT_MSG_EQ(NcclAlgorithmName(f.algorithm), std::string("ring"), "NCCL_ALGO");
        NS_TEST_ASSERT_MSG_EQ(NcclProtocolName(f.protocol), std::string("ll128"), "NCCL_PROTO");
        NS_TEST_ASSERT_MSG_EQ(f.nChannels, 3U, "NCCL_MIN/MAX_NCHANNELS");
        const NcclPlan plan =
            MakeNcclPlan(NcclCollectiveKind::AllGather, OneNode(4), 1 << 20, forced);
        NS_TEST_ASSERT_MSG_EQ(plan.protocol, "ll128", "the plan follows the override");
        NS_TEST_ASSERT_MSG_EQ(plan.nChannels, 3U, "channels follow the override");
        NS_TEST_ASSERT_MSG_EQ(plan.fixedLatency,
                              PicoSeconds(static_cast<int64_t>(forced.ll128.baseLatencyNs * 1000)),
                              "the protocol's base latency");
        NS_TEST_ASSERT_MSG_EQ(plan.transfers[0].delay,
                              PicoSeconds(static_cast<int64_t>(forced.ll128.stepLatencyNs * 1000)),
                              "the protocol's step latency");
    }
};

class NcclRailTestCase : public TestCase
{
public:
    NcclRailTestCase()
        : TestCase("across nodes each channel keeps to one rail, and trees leave through "
                   "every NIC")
    {
    }

private:
    void DoRun() override
    {
        const NcclCommShape twoNodes{16, 8};
        NcclConfig c = Forced("ring", "simple", 8);
        const NcclPlan ring = MakeNcclPlan(NcclCollectiveKind::AllReduce, twoNodes, 64 << 20, c);
        std::set<uint32_t> railsUsed;
        for (const auto& t : ring.transfers)
        {
            if (t.src / 8 != t.dst / 8)
            {
                NS_TEST_ASSERT_MSG_EQ(t.src % 8, t.dst % 8,
                                      "a ring hop between servers stays on its rail (channel "
                                          << t.channel << ": " << t.src << " -> " << t.dst << ")");
                railsUsed.insert(t.src % 8);
            }
        }
        NS_TEST_ASSERT_MSG_EQ(railsUsed.size(), 8U, "8 channels spread over all 8 rails");

        c.algorithm = "tree";
        const NcclPlan tree = MakeNcclPlan(NcclCollectiveKind::AllReduce, twoNodes, 64 << 20, c);
        std::set<uint32_t> nics;
        for (const auto& t : tree.transfers)
        {
            if (t.src / 8 != t.dst / 8)
            {
                NS_TEST_ASSERT_MSG_EQ(t.src % 8, t.dst % 8, "tree edges between servers too");
                nics.insert(t.src % 8);
            }
        }
        NS_TEST_ASSERT_MSG_EQ(nics.size(), 4U, "8 channels = 4 tree pairs, 4 NICs");
    }
};

class NcclModelTestSuite : public TestSuite
{
public:
    NcclModelTestSuite() : TestSuite("phantora-nccl-model", UNIT)
    {
        AddTestCase(new NcclVolumeTestCase, TestCase::QUICK);
        AddTestCase(new NcclProtocolTestCase, TestCase::QUICK);
        AddTestCase(new NcclChannelTestCase, TestCase::QUICK);
        AddTestCase(new NcclTreeTestCase, TestCase::QUICK);
        AddTestCase(new NcclTuningTestCase, TestCase::QUICK);
        AddTestCase(new NcclRailTestCase, TestCase::QUICK);
    }
};

static NcclModelTestSuite g_ncclModelTestSuite;
