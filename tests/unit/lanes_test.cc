// The engine with ranks of several threads: a thread blocked in the host holds no
// simulated time back, a wake given to it holds time at the waker's clock until the
// woken thread runs, and a wake nobody gave is refused.
#include "engine/simulation_engine.h"
#include "scripted_ranks.h"

#include <gtest/gtest.h>
#include <map>
#include <vector>

using namespace phantora;

namespace
{

Scenario TwoGpus()
{
    Scenario s = test::EngineScenario("lanes", 2, 1000);
    s.network.transport = "flow";
    s.kernels.defaultNs = 1000;
    return s;
}

/// Requests from (rank, thread) pairs, in the order the test sends them.
class Threads
{
public:
    /// Keeps its own copy of \p s: the engine holds a reference to it.
    explicit Threads(const Scenario& s) : m_scenario(s), m_engine(m_scenario, 2) {}

    void Send(int rank, uint32_t lane, int64_t clockNs, wire::Request body)
    {
        wire::RequestEnvelope req;
        req.seq = ++m_seq[{rank, lane}];
        req.order = m_order[rank]++;
        req.lane = lane;
        req.clockNs = clockNs;
        req.body = std::move(body);
        m_engine.Handle(rank, req, m_out);
        m_engine.Progress(m_out);
        while (m_engine.WantsProgress())
        {
            m_engine.Progress(m_out);
        }
        for (const auto& o : m_out)
        {
            if (const auto* r = std::get_if<wire::Resume>(&o.reply.body))
            {
                resumes[{o.rank, o.lane}].push_back(r->clockNs);
            }
            if (const auto* c = std::get_if<wire::CommReady>(&o.reply.body))
            {
                comm = c->comm;
            }
            if (const auto* v = std::get_if<wire::CollectiveResult>(&o.reply.body))
            {
                results[{o.rank, o.lane}].push_back(*v);
            }
        }
        m_out.clear();
    }

    void Host(int rank, uint32_t lane, int64_t clockNs, wire::HostEventKind kind,
              int64_t atNs = wire::kNoTime, uint32_t other = 0)
    {
        Send(rank, lane, clockNs, wire::HostEvent{kind, other, atNs});
    }

    /// Resume instants thread \p lane of \p rank was given, in order.
    std::vector<int64_t> Resumes(int rank, uint32_t lane) { return resumes[{rank, lane}]; }

    std::map<std::pair<int, uint32_t>, std::vector<int64_t>> resumes;
    std::map<std::pair<int, uint32_t>, std::vector<wire::CollectiveResult>> results;
    uint64_t comm{0};

private:
    Scenario m_scenario;
    SimulationEngine m_engine;
    std::vector<OutgoingReply> m_out;
    std::map<std::pair<int, uint32_t>, uint64_t> m_seq;
    std::map<int, uint64_t> m_order;
};

wire::NcclCommInit Init(int rank)
{
    wire::NcclCommInit m;
    m.id.fill(7);
    m.nranks = 2;
    m.rank = rank;
    return m;
}

wire::NcclCollective AllReduce(uint64_t comm)
{
    wire::NcclCollective m;
    m.comm = comm;
    m.op = wire::CollectiveOp::AllReduce;
    m.bytes = 8 << 20;
    m.stream = 0x1000;
    return m;
}

wire::Synchronize Stream()
{
    wire::Synchronize m;
    m.stream = 0x1000;
    return m;
}

/// Both ranks connected, in one communicator; rank 0 has started thread 1 at 0 ns.
void Connect(Threads& t)
{
    t.Send(0, 0, 0, wire::Hello{"", 0, 2, 0, 100});
    t.Send(1, 0, 0, wire::Hello{"", 1, 2, 1, 101});
    t.Send(0, 0, 0, Init(0));
    t.Send(1, 0, 0, Init(1));
    t.Host(0, 0, 0, wire::HostEventKind::Born, wire::kNoTime, 1);
}

} // namespace

TEST(Lanes, AWakeHoldsTimeUntilTheWokenThreadRuns)
{
    Threads t(TwoGpus());
    Connect(t);
    // Both ranks all-reduce; rank 1 waits for it.
    t.Send(0, 0, 0, AllReduce(t.comm));
    t.Send(1, 0, 0, AllReduce(t.comm));
    t.Send(1, 0, 0, Stream());
    // Rank 0's new thread blocks; its first thread wakes it at 2 us, then blocks too.
    t.Host(0, 1, 0, wire::HostEventKind::Block);
    t.Host(0, 0, 2000, wire::HostEventKind::Wake);
    t.Host(0, 0, 2000, wire::HostEventKind::Block);
    EXPECT_TRUE(t.Resumes(1, 0).empty())
        << "the woken thread could still start something at 2 us, before the all-reduce ends";
    t.Host(0, 1, 2000, wire::HostEventKind::Resume, 2000);
    EXPECT_TRUE(t.Resumes(1, 0).empty()) << "the woken thread runs at 2 us";
    // Once it blocks as well, nothing of rank 0 can start anything any more.
    t.Host(0, 1, 2500, wire::HostEventKind::Block);
    ASSERT_EQ(t.Resumes(1, 0).size(), 1U);
    // 8 MiB all-reduced over a 400 Gb/s link takes more than 2 x 1/2 x 8 MiB of it
    EXPECT_GT(t.Resumes(1, 0)[0], 8LL * 1048576 * 8 / 400);
}

TEST(Lanes, ABlockedThreadHoldsNothingBack)
{
    Threads t(TwoGpus());
    Connect(t);
    t.Send(0, 0, 0, AllReduce(t.comm));
    t.Send(1, 0, 0, AllReduce(t.comm));
    t.Send(1, 0, 0, Stream());
    t.Send(0, 0, 0, Stream());
    EXPECT_TRUE(t.Resumes(1, 0).empty()) << "thread 1 of rank 0 runs at 0 ns";
    t.Host(0, 1, 0, wire::HostEventKind::Block);
    ASSERT_EQ(t.Resumes(0, 0).size(), 1U);
    ASSERT_EQ(t.Resumes(1, 0).size(), 1U);
    EXPECT_EQ(t.Resumes(0, 0)[0], t.Resumes(1, 0)[0]);
}

TEST(Lanes, ATimedWaitHoldsTimeAtItsDeadline)
{
    Threads t(TwoGpus());
    Connect(t);
    t.Send(0, 0, 0, AllReduce(t.comm));
    t.Send(1, 0, 0, AllReduce(t.comm));
    t.Send(1, 0, 0, Stream());
    t.Send(0, 0, 0, Stream());
    t.Host(0, 1, 0, wire::HostEventKind::Block, 5000); // may wake on its own at 5 us
    EXPECT_TRUE(t.Resumes(1, 0).empty());
    t.Host(0, 1, 5000, wire::HostEventKind::Resume);
    t.Host(0, 1, 5000, wire::HostEventKind::Exit, wire::kNoTime, 1);
    EXPECT_EQ(t.Resumes(1, 0).size(), 1U);
}

// A rank's first thread that polled a network socket for long waits for another rank (an
// NCCL id in the TCPStore, which PyTorch passes when it creates a communicator at its
// first collective): it holds nothing back, so the other ranks' collectives complete, and
// it resumes where simulated time then is, not at the clock it stopped at.
TEST(Lanes, AFirstThreadWaitingOnAnotherProcessHoldsNothingBackAndResumesWhereTimeIs)
{
    Threads t(TwoGpus());
    Connect(t);
    t.Send(0, 0, 0, AllReduce(t.comm));
    t.Send(1, 0, 0, AllReduce(t.comm));
    t.Send(0, 0, 0, Stream());
    t.Host(0, 1, 0, wire::HostEventKind::Block);
    EXPECT_TRUE(t.Resumes(0, 0).empty()) << "rank 1's first thread runs at 0 ns";
    t.Host(1, 0, 0, wire::HostEventKind::BlockOutside);
    ASSERT_EQ(t.Resumes(0, 0).size(), 1U) << "rank 1 waits for another process";
    const int64_t end = t.Resumes(0, 0)[0];
    EXPECT_GT(end, 8LL * 1048576 * 8 / 400);
    t.Host(1, 0, 0, wire::HostEventKind::Resume);
    // Rank 1 records an event on an idle stream: at its clock, lifted to the all-reduce's end.
    t.Send(1, 0, 0, wire::EventRecord{0x2000, 1});
    t.Send(1, 0, 0, wire::EventWait{1, false});
    ASSERT_EQ(t.Resumes(1, 0).size(), 1U);
    EXPECT_GE(t.Resumes(1, 0)[0], end);
}

TEST(Lanes, AWakeNobodyGaveIsRefused)
{
    Threads t(TwoGpus());
    Connect(t);
    t.Host(0, 1, 0, wire::HostEventKind::Block);
    EXPECT_THROW(t.Host(0, 1, 300, wire::HostEventKind::Resume, 300), SimulationError);
}

// A small all-gather whose members all sent their bytes: a member asking for its result
// waits (its clock held) until every member issued it, then reads the concatenation.
TEST(Lanes, ACollectiveWithValuesAnswersItsResultOnceEveryMemberIssuedIt)
{
    Threads t(TwoGpus());
    Connect(t);
    auto r0 = [&]() -> std::vector<wire::CollectiveResult>&
    { return t.results[std::make_pair(0, 0U)]; };
    auto r1 = [&]() -> std::vector<wire::CollectiveResult>&
    { return t.results[std::make_pair(1, 0U)]; };
    auto gather = [&](const std::string& bytes)
    {
        wire::NcclCollective m = AllReduce(t.comm);
        m.op = wire::CollectiveOp::AllGather;
        m.bytes = 8;
        m.dataType = wire::DataType::Int32;
        m.hasValues = true;
        m.values = bytes;
        return m;
    };
    t.Send(0, 0, 100, gather("AAAA"));
    t.Send(0, 0, 200, wire::CollectiveValues{t.comm, 0});
    EXPECT_TRUE(r0().empty()) << "rank 1 has not issued it yet";
    t.Send(1, 0, 50, gather("BBBB"));
    ASSERT_EQ(r0().size(), 1U);
    EXPECT_TRUE(r0()[0].known);
    EXPECT_EQ(r0()[0].values, "AAAABBBB");
    t.Send(1, 0, 60, wire::CollectiveValues{t.comm, 0});
    ASSERT_EQ(r1().size(), 1U);
    EXPECT_EQ(r1()[0].values, "AAAABBBB");
    // A member without values: the result is unknown.
    wire::NcclCollective plain = gather("");
    plain.hasValues = false;
    t.Send(0, 0, 300, gather("CCCC"));
    t.Send(1, 0, 300, plain);
    t.Send(0, 0, 300, wire::CollectiveValues{t.comm, 1});
    ASSERT_EQ(r0().size(), 2U);
    EXPECT_FALSE(r0()[1].known);
}

// A small send carries its bytes: the receiver asking for them waits until the sender
// issued the send (its clock held no later than the sender can still issue it), then
// reads them; a send without values leaves the receive's bytes unknown.
TEST(Lanes, ASendWithValuesGivesItsBytesToTheMatchingReceive)
{
    Threads t(TwoGpus());
    Connect(t);
    auto r1 = [&]() -> std::vector<wire::CollectiveResult>&
    { return t.results[std::make_pair(1, 0U)]; };
    auto p2p = [&](bool send, const std::string& bytes, bool values)
    {
        wire::P2POp op{send ? 1 : 0, 8, send};
        op.hasValues = values;
        op.values = bytes;
        return wire::NcclP2P{t.comm, 0x1000, {op}};
    };
    t.Send(1, 0, 100, p2p(false, "", false));
    t.Send(1, 0, 200, wire::P2PValues{t.comm, 0, 0});
    EXPECT_TRUE(r1().empty()) << "rank 0 has not sent yet";
    t.Send(0, 0, 300, p2p(true, "ABCDEFGH", true));
    ASSERT_EQ(r1().size(), 1U);
    EXPECT_TRUE(r1()[0].known);
    EXPECT_EQ(r1()[0].values, "ABCDEFGH");
    EXPECT_EQ(r1()[0].clockNs, 300) << "the bytes exist once rank 0 sent them";
    // The second send carries none: unknown.
    t.Send(0, 0, 400, p2p(true, "", false));
    t.Send(1, 0, 400, p2p(false, "", false));
    t.Send(1, 0, 400, wire::P2PValues{t.comm, 0, 1});
    ASSERT_EQ(r1().size(), 2U);
    EXPECT_FALSE(r1()[1].known);
}
