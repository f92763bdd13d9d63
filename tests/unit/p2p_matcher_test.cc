#include "engine/collective_error.h"
#include "engine/p2p_matcher.h"

#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <vector>

using namespace phantora;

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
