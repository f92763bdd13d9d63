#include "engine/collective_error.h"
#include "engine/collective_matcher.h"
#include "engine/communicator_registry.h"
#include "engine/p2p_matcher.h"

#include <functional>
#include <gtest/gtest.h>
#include <map>

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

TEST(Communicators, InitCompletesWhenEveryMemberJoined)
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

TEST(Communicators, InconsistentInitIsAnError)
{
    CommunicatorRegistry reg;
    reg.Join(Id(2), 2, 0, 0);
    EXPECT_THROW(reg.Join(Id(2), 3, 1, 1), CollectiveError);
    EXPECT_THROW(reg.Join(Id(2), 2, 0, 1), CollectiveError);
    EXPECT_THROW(reg.Join(Id(3), 2, 5, 1), CollectiveError);
}

TEST(Communicators, CollectiveStartsAtTheLastMembersReadyTime)
{
    CommunicatorRegistry reg;
    reg.Join(Id(1), 2, 0, 0);
    const Communicator& comm = *reg.Join(Id(1), 2, 1, 1)->comm;
    std::vector<MatchedCollective> started;
    CollectiveMatcher m([&](const MatchedCollective& c) { started.push_back(c); });
    m.Ready(comm, 0, 1, wire::CollectiveOp::AllReduce, 4096, 11, 700);
    EXPECT_TRUE(started.empty());
    EXPECT_EQ(m.Incomplete().size(), 1U);
    m.Ready(comm, 0, 0, wire::CollectiveOp::AllReduce, 4096, 10, 300);
    ASSERT_EQ(started.size(), 1U);
    EXPECT_EQ(started[0].startNs, 700);
    EXPECT_EQ(started[0].memberTickets, (std::vector<uint64_t>{10, 11}));
    EXPECT_TRUE(m.Incomplete().empty());
}

TEST(Communicators, MismatchedSizesAreReported)
{
    CommunicatorRegistry reg;
    reg.Join(Id(1), 2, 0, 0);
    const Communicator& comm = *reg.Join(Id(1), 2, 1, 1)->comm;
    CollectiveMatcher m([](const MatchedCollective&) {});
    m.Ready(comm, 0, 0, wire::CollectiveOp::AllReduce, 4096, 1, 0);
    EXPECT_THROW(m.Ready(comm, 0, 1, wire::CollectiveOp::AllReduce, 8192, 2, 0), CollectiveError);
}

TEST(Communicators, SplitGroupsByColorAndOrdersByKey)
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

namespace
{

/// A P2PMatcher whose transfers take 10 ns per byte, ended by the test.
struct P2PHarness
{
    struct Running
    {
        P2PMatcher::Transfer t;
        std::function<void(int64_t)> done;
    };
    std::vector<Running> running;
    std::map<std::pair<int, uint64_t>, int64_t> finished; ///< (rank, ticket) -> end
    P2PMatcher matcher{[this](const P2PMatcher::Transfer& t, std::function<void(int64_t)> done) {
                           running.push_back({t, std::move(done)});
                       },
                       [this](int rank, uint64_t ticket, int64_t endNs) {
                           finished[{rank, ticket}] = endNs;
                       }};

    void FinishAll()
    {
        auto now = std::move(running);
        running.clear();
        for (auto& r : now)
        {
            r.done(r.t.startNs + 10 * static_cast<int64_t>(r.t.bytes));
        }
    }
};

Communicator Comm(std::vector<int> ranks)
{
    return Communicator{9, std::move(ranks)};
}

} // namespace

TEST(P2P, SendsMatchReceivesInOrderPerPeer)
{
    P2PHarness h;
    const Communicator comm = Comm({10, 11});
    // rank 10 sends 100 then 200 bytes to rank 11; rank 11 receives them in that order
    auto s1 = h.matcher.Number(comm, 0, {1, 100, true});
    auto s2 = h.matcher.Number(comm, 0, {1, 200, true});
    auto r1 = h.matcher.Number(comm, 1, {0, 100, false});
    auto r2 = h.matcher.Number(comm, 1, {0, 200, false});
    EXPECT_EQ(s2.sequence, 1U);
    EXPECT_EQ(r2.sequence, 1U);
    h.matcher.Ready(comm, 0, 1, {s1}, 50);
    EXPECT_TRUE(h.running.empty());
    EXPECT_EQ(h.matcher.Incomplete().size(), 1U);
    h.matcher.Ready(comm, 1, 2, {r1}, 70);
    ASSERT_EQ(h.running.size(), 1U);
    EXPECT_EQ(h.running[0].t.startNs, 70); // the later side's stream decides
    EXPECT_EQ(h.running[0].t.from, 0);
    EXPECT_EQ(h.running[0].t.to, 1);
    h.FinishAll();
    EXPECT_EQ(h.finished.at({10, 1}), 70 + 1000);
    EXPECT_EQ(h.finished.at({11, 2}), 70 + 1000);
    h.matcher.Ready(comm, 1, 4, {r2}, 2000);
    h.matcher.Ready(comm, 0, 3, {s2}, 1500);
    ASSERT_EQ(h.running.size(), 1U);
    EXPECT_EQ(h.running[0].t.bytes, 200U);
    EXPECT_TRUE(h.matcher.Incomplete().empty());
}

TEST(P2P, AGroupEndsWithItsLastTransfer)
{
    P2PHarness h;
    const Communicator comm = Comm({0, 1, 2});
    // rank 0 sends to 1 and 2 in one group; each receives on its own
    std::vector<P2PMatcher::Op> group{h.matcher.Number(comm, 0, {1, 10, true}),
                                      h.matcher.Number(comm, 0, {2, 30, true})};
    h.matcher.Ready(comm, 0, 1, group, 0);
    h.matcher.Ready(comm, 1, 2, {h.matcher.Number(comm, 1, {0, 10, false})}, 0);
    h.FinishAll();
    EXPECT_FALSE(h.finished.count({0, 1})) << "the send to rank 2 has not run yet";
    EXPECT_EQ(h.finished.at({1, 2}), 100);
    h.matcher.Ready(comm, 2, 3, {h.matcher.Number(comm, 2, {0, 30, false})}, 5);
    h.FinishAll();
    EXPECT_EQ(h.finished.at({0, 1}), 5 + 300);
}

TEST(P2P, MismatchedSizeNamesBothRanks)
{
    P2PHarness h;
    const Communicator comm = Comm({4, 5});
    h.matcher.Ready(comm, 0, 1, {h.matcher.Number(comm, 0, {1, 64, true})}, 0);
    try
    {
        h.matcher.Ready(comm, 1, 2, {h.matcher.Number(comm, 1, {0, 32, false})}, 0);
        FAIL() << "a 64-byte send matched a 32-byte receive";
    }
    catch (const CollectiveError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("rank 4 sends 64 bytes"), std::string::npos) << what;
        EXPECT_NE(what.find("rank 5 receives 32 bytes"), std::string::npos) << what;
    }
    EXPECT_THROW(h.matcher.Number(comm, 0, {2, 1, true}), CollectiveError);
}

TEST(P2P, UnmatchedOperationsAreListed)
{
    P2PHarness h;
    const Communicator comm = Comm({0, 1});
    h.matcher.Ready(comm, 1, 1, {h.matcher.Number(comm, 1, {0, 8, false})}, 0);
    const auto open = h.matcher.Incomplete();
    ASSERT_EQ(open.size(), 1U);
    EXPECT_NE(open[0].find("receive #0 of 8 bytes by rank 1 from rank 0"), std::string::npos)
        << open[0];
}
