// The network's optimistic run: collectives that arrive in its past are replayed from
// a checkpoint, and the result is the one it would have had if they had come in time.
#include "network_model.h"

#include <gtest/gtest.h>
#include <map>
#include <string>
#include <vector>

using namespace phantora;

namespace
{

Scenario FourGpus(const std::string& transport)
{
    Scenario s;
    s.name = "net";
    s.topology.gpus = 4;
    s.topology.gpusPerNode = 4;
    s.topology.linkBitsPerSecond = 400e9;
    s.topology.linkLatencyNs = 1000;
    s.network.transport = transport;
    return s;
}

struct Collective
{
    std::string name;
    int64_t startNs;
    std::vector<uint32_t> gpus;
    uint64_t bytes;
    NetworkModel::OrderKey order;
};

/// Drives a NetworkModel as the engine does: collectives are started when given, the
/// network runs ahead, completions are taken as soon as they are decided.
class Driver
{
public:
    explicit Driver(const std::string& transport)
        : m_scenario(FourGpus(transport)), m_net(m_scenario)
    {
    }

    void Start(const Collective& c)
    {
        m_net.StartCollective(
            c.startNs,
            phantora::nccl::MakeRingAllReducePlan(static_cast<uint32_t>(c.gpus.size()), c.bytes),
            c.gpus, [this, name = c.name](int64_t endNs) { ends[name] = endNs; }, c.order, c.name);
    }

    /// Runs ahead until the network has nothing left, taking nothing.
    void RunAhead()
    {
        while (m_net.Advance(NetworkModel::kForever))
        {
        }
    }

    /// The earliest undecided completion's end, as simulated so far.
    int64_t SpeculativeEnd(const std::string& name)
    {
        RunAhead();
        const auto* c = m_net.NextCompletion();
        EXPECT_NE(c, nullptr);
        EXPECT_EQ(c->label, name);
        return c ? c->endNs : -1;
    }

    void TakeOne()
    {
        for (;;)
        {
            if (m_net.NextCompletion())
            {
                m_net.TakeCompletion();
                return;
            }
            ASSERT_TRUE(m_net.Advance(NetworkModel::kForever)) << "nothing to take";
        }
    }

    void Finish()
    {
        for (;;)
        {
            while (m_net.NextCompletion())
            {
                m_net.TakeCompletion();
            }
            if (!m_net.Advance(NetworkModel::kForever))
            {
                break;
            }
        }
        EXPECT_FALSE(m_net.Busy());
    }

    const NetworkModel::Counters& Stats() const { return m_net.Stats(); }

    std::map<std::string, int64_t> ends;

private:
    Scenario m_scenario;
    NetworkModel m_net;
};

std::map<std::string, int64_t> AllAtOnce(const std::string& transport,
                                         const std::vector<Collective>& cs)
{
    Driver d(transport);
    for (const auto& c : cs)
    {
        d.Start(c);
    }
    d.Finish();
    EXPECT_EQ(d.Stats().pastEvents, 0U);
    EXPECT_EQ(d.Stats().restores, 0U);
    return d.ends;
}

class NetworkReplay : public testing::TestWithParam<std::string>
{
};

} // namespace

TEST_P(NetworkReplay, ACollectiveArrivingInThePastIsReplayedWithTheOthers)
{
    // b shares GPU 1's link with a, so a alone ends earlier than a beside b.
    const Collective a{"a", 0, {0, 1}, 8 << 20, {0, 0}};
    const Collective b{"b", 20000, {1, 2}, 8 << 20, {1, 0}};
    const auto expected = AllAtOnce(GetParam(), {a, b});

    Driver d(GetParam());
    d.Start(a);
    const int64_t aloneEnd = d.SpeculativeEnd("a");
    EXPECT_LT(aloneEnd, expected.at("a")) << "b does not slow a: the test shows nothing";
    EXPECT_GT(aloneEnd, b.startNs);
    d.Start(b); // starts before what the network has already simulated
    d.Finish();
    EXPECT_EQ(d.ends, expected);
    EXPECT_EQ(d.Stats().pastEvents, 1U);
    EXPECT_EQ(d.Stats().restores, 1U);
    EXPECT_EQ(d.Stats().replayedCollectives, 1U);
    EXPECT_EQ(d.Stats().discardedCompletions, 1U);
}

TEST_P(NetworkReplay, ReplayReproducesCompletionsAlreadyTaken)
{
    // a ends early and is taken; c runs on; b then starts between a's end and the
    // network's present, so the restore goes back before a, which must end the same.
    const Collective a{"a", 0, {0, 1}, 1 << 20, {0, 0}};
    const Collective c{"c", 0, {2, 3}, 32 << 20, {2, 0}};
    std::map<std::string, int64_t> expected;
    int64_t aEnd = 0;
    {
        Driver d(GetParam());
        d.Start(a);
        d.Start(c);
        d.TakeOne();
        ASSERT_EQ(d.ends.size(), 1U);
        aEnd = d.ends.at("a");
    }
    const Collective b{"b", aEnd + 1000, {1, 2}, 8 << 20, {1, 0}};
    // One ns-3 simulator per process: one NetworkModel at a time.
    expected = AllAtOnce(GetParam(), {a, c, b});
    Driver d(GetParam());
    d.Start(a);
    d.Start(c);
    d.TakeOne();
    ASSERT_EQ(d.ends.at("a"), aEnd);
    d.RunAhead();
    EXPECT_LT(aEnd + 1000, d.SpeculativeEnd("c"));
    d.Start(b);
    d.Finish();
    EXPECT_EQ(d.ends, expected);
    EXPECT_EQ(d.ends.at("a"), aEnd);
    EXPECT_EQ(d.Stats().restores, 1U);
    EXPECT_EQ(d.Stats().replayedCollectives, 2U); // a and c
}

TEST_P(NetworkReplay, CollectivesOfOneInstantDoNotDependOnArrivalOrder)
{
    const Collective x{"x", 1000, {0, 1}, 4 << 20, {0, 0}};
    const Collective y{"y", 1000, {0, 2}, 4 << 20, {0, 1}};
    const Collective z{"z", 1000, {3, 0}, 4 << 20, {3, 0}};
    const auto expected = AllAtOnce(GetParam(), {x, y, z});
    for (const auto& order : std::vector<std::vector<Collective>>{{z, y, x}, {y, x, z}})
    {
        Driver d(GetParam());
        for (const auto& c : order)
        {
            d.Start(c);
            d.RunAhead(); // the instant's batch is applied before the next one arrives
        }
        d.Finish();
        EXPECT_EQ(d.ends, expected);
        EXPECT_EQ(d.Stats().pastEvents, 2U);
    }
}

TEST_P(NetworkReplay, IdleInstantsAreCheckpointsAndBoundTheReplay)
{
    // p ends long before q starts, so q's late arrival only replays from the idle
    // instant after p, not p itself.
    const Collective p{"p", 0, {0, 1}, 1 << 20, {0, 0}};
    const Collective q{"q", 500000, {1, 2}, 1 << 20, {1, 0}};
    const Collective r{"r", 400000, {2, 3}, 1 << 20, {2, 0}};
    const auto expected = AllAtOnce(GetParam(), {p, q, r});
    Driver d(GetParam());
    d.Start(p);
    d.Start(q);
    d.RunAhead();
    d.Start(r); // before q, after p's end
    d.Finish();
    EXPECT_EQ(d.ends, expected);
    EXPECT_EQ(d.Stats().restores, 1U);
    EXPECT_EQ(d.Stats().replayedCollectives, 1U); // q only
    EXPECT_GE(d.Stats().checkpoints, 2U);
}

INSTANTIATE_TEST_SUITE_P(Transports, NetworkReplay, testing::Values("flow", "packet"));

TEST(NetworkModelRankEnds, EachRankOfAChainEndsWithItsOwnLastTransfer)
{
    // A broadcast's chain 0 -> 1 -> 2 -> 3: the root is done after its send, the tail only
    // once the data went through every hop; the completion's end is the last rank's.
    for (const char* transport : {"flow", "packet"})
    {
        Scenario s = FourGpus(transport);
        NetworkModel net(s);
        phantora::nccl::Plan chain;
        chain.fixedLatency = phantora::nccl::Picoseconds(2'000'000);
        for (uint32_t r = 0; r + 1 < 4; ++r)
        {
            phantora::nccl::Transfer t{r, r + 1, 1 << 20};
            if (r > 0)
            {
                t.deps = {r - 1};
            }
            chain.transfers.push_back(t);
        }
        NetworkModel::Completion got;
        bool done = false;
        net.StartCollective(0, chain, {0, 1, 2, 3},
                            NetworkModel::CompletionFn(
                                [&](const NetworkModel::Completion& c)
                                {
                                    got = c;
                                    done = true;
                                }));
        while (!done)
        {
            ASSERT_TRUE(net.Busy()) << transport;
            net.RunUntil(NetworkModel::kForever);
        }
        ASSERT_EQ(got.rankEndNs.size(), 1U) << transport;
        const std::vector<int64_t>& e = got.rankEndNs[0];
        ASSERT_EQ(e.size(), 4U) << transport;
        EXPECT_LT(e[0], e[1]) << transport << ": the root ends before its successor";
        EXPECT_LT(e[1], e[2]) << transport;
        EXPECT_EQ(e[2], e[3]) << transport << ": the last two end with the last hop";
        EXPECT_EQ(got.endNs, e[3]) << transport;
        // Each hop of 1 MiB at 400 Gb/s takes at least 21 us: the tail ends two hops after
        // the root.
        EXPECT_GT(e[3] - e[0], 2 * 20'000) << transport;
    }
}
