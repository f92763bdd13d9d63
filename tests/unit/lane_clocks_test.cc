// The ranks' threads alone (Lanes): a request moves its thread's clock, a thread nobody
// announced is lifted to committed time, a blocked call is answered with its own request
// number at the thread's clock, and a wake carries the waker's clock to the woken thread.
#include "engine/lanes.h"
#include "engine/simulation_error.h"

#include <gtest/gtest.h>
#include <vector>

using namespace phantora;

namespace
{

wire::RequestEnvelope Request(uint32_t lane, uint64_t seq, int64_t clockNs, wire::Request body)
{
    wire::RequestEnvelope req;
    req.seq = seq;
    req.lane = lane;
    req.clockNs = clockNs;
    req.body = std::move(body);
    return req;
}

wire::HostEvent Host(wire::HostEventKind kind, int64_t atNs = wire::kNoTime, uint32_t other = 0)
{
    return wire::HostEvent{kind, other, atNs};
}

PendingWait DeviceSync()
{
    PendingWait w;
    w.kind = PendingWait::Kind::Device;
    w.call = "cudaDeviceSynchronize";
    return w;
}

} // namespace

TEST(LaneClocks, ARequestMovesItsThreadsClockForwardOnly)
{
    Lanes lanes(2, nullptr);
    std::vector<OutgoingReply> out;
    const RequestContext a = lanes.Enter(1, Request(0, 1, 500, wire::Goodbye{}), 0, out);
    EXPECT_EQ(a.rank, 1);
    EXPECT_EQ(a.lane, 0U);
    EXPECT_EQ(a.nowNs, 500);
    EXPECT_EQ(a.sentNs, 500);
    EXPECT_EQ(a.seq, 1U);
    EXPECT_EQ(&a.out, &out);
    EXPECT_EQ(lanes.Rank(1).clockNs, 500);
    // A clock behind the thread's own (a host event it already accounted for) keeps it.
    const RequestContext b = lanes.Enter(1, Request(0, 2, 300, wire::Goodbye{}), 0, out);
    EXPECT_EQ(b.nowNs, 500);
    EXPECT_EQ(b.sentNs, 300);
    EXPECT_THROW(lanes.Rank(2), SimulationError);
}

TEST(LaneClocks, AThreadNobodyAnnouncedIsLiftedToCommittedTime)
{
    Lanes lanes(1, nullptr);
    std::vector<OutgoingReply> out;
    lanes.Rank(0).phase = RankPhase::Running;
    const RequestContext ctx = lanes.Enter(0, Request(4, 1, 100, wire::Goodbye{}), 9000, out);
    EXPECT_EQ(ctx.nowNs, 9000);
    EXPECT_EQ(lanes.Rank(0).liftedLanes, 1U);
}

TEST(LaneClocks, ABlockedCallIsAnsweredWithItsOwnRequestNumber)
{
    Lanes lanes(1, nullptr);
    std::vector<OutgoingReply> out;
    const RequestContext ctx = lanes.Enter(0, Request(3, 17, 2000, wire::Goodbye{}), 0, out);
    lanes.Block(ctx, DeviceSync());
    const LaneState& l = lanes.Rank(0).lanes.at(3);
    ASSERT_EQ(l.phase, LaneState::Phase::Waiting);
    EXPECT_EQ(l.wait->seq, 17U);
    EXPECT_EQ(l.wait->lane, 3U);
    EXPECT_EQ(l.wait->callNs, 2000);
    EXPECT_EQ(lanes.Rank(0).lastCall, "cudaDeviceSynchronize");
    EXPECT_THROW(lanes.Enter(0, Request(3, 18, 2000, wire::Goodbye{}), 0, out), SimulationError)
        << "a thread blocked in a call sends nothing";

    lanes.Resume(0, 3, 7500, out);
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].rank, 0);
    EXPECT_EQ(out[0].lane, 3U);
    EXPECT_EQ(out[0].reply.seq, 17U);
    ASSERT_TRUE(std::holds_alternative<wire::Resume>(out[0].reply.body));
    EXPECT_EQ(std::get<wire::Resume>(out[0].reply.body).clockNs, 7500);
    EXPECT_EQ(l.phase, LaneState::Phase::Running);
    EXPECT_FALSE(l.wait);
    EXPECT_EQ(lanes.Rank(0).clockNs, 7500);
}

TEST(LaneClocks, AWakeCarriesTheWakersClockToTheWokenThread)
{
    Lanes lanes(1, nullptr);
    std::vector<OutgoingReply> out;
    const RequestContext born = lanes.Enter(0, Request(0, 1, 0, wire::Goodbye{}), 0, out);
    lanes.OnHostEvent(born, Host(wire::HostEventKind::Born, wire::kNoTime, 1), 0);
    const RequestContext block =
        lanes.Enter(0, Request(1, 1, 100, Host(wire::HostEventKind::Block)), 0, out);
    lanes.OnHostEvent(block, Host(wire::HostEventKind::Block), 0);
    EXPECT_THROW(lanes.Enter(0, Request(1, 2, 100, wire::Goodbye{}), 0, out), SimulationError)
        << "a thread in a host wait sends nothing but its resumption";

    // Thread 0 wakes it at 2 us, when simulated time is already at 3 us.
    const RequestContext wake =
        lanes.Enter(0, Request(0, 2, 2000, Host(wire::HostEventKind::Wake)), 3000, out);
    lanes.OnHostEvent(wake, Host(wire::HostEventKind::Wake), 3000);
    ASSERT_EQ(lanes.Rank(0).pendingWakes.count(2000), 1U);

    const RequestContext resume =
        lanes.Enter(0, Request(1, 2, 150, Host(wire::HostEventKind::Resume, 2000)), 3000, out);
    lanes.OnHostEvent(resume, Host(wire::HostEventKind::Resume, 2000), 3000);
    EXPECT_EQ(lanes.Rank(0).lanes.at(1).clockNs, 3000);
    EXPECT_EQ(lanes.Rank(0).lanes.at(1).phase, LaneState::Phase::Running);
    EXPECT_TRUE(lanes.Rank(0).pendingWakes.empty());
    EXPECT_THROW(lanes.OnHostEvent(resume, Host(wire::HostEventKind::Resume, 2000), 3000),
                 SimulationError)
        << "the wake was taken up already";
}
