// A lane's socket is closed as its thread ends, with the thread's last requests still
// queued when the bridge is behind.  They must reach the bridge however late it reads
// them: the bridge hands a rank's requests over in order and would wait for them forever.
#include "lane_socket.h"

#include <chrono>
#include <cstdio>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <zmq.hpp>

using namespace phantora::interposer;

namespace
{

struct Delivery
{
    int sent{0};
    int received{0};
};

/// A lane queues requests until ZeroMQ and the kernel hold all they can (the bridge is
/// not reading), its thread closes the socket with linger \p lingerMs, and the bridge
/// starts reading 3 s later, longer than the 2 s lanes lingered before.
Delivery CloseWhileTheBridgeIsBusy(int lingerMs)
{
    zmq::context_t bridgeContext(1);
    zmq::socket_t bridge(bridgeContext, zmq::socket_type::router);
    bridge.set(zmq::sockopt::linger, 0);
    bridge.set(zmq::sockopt::rcvbuf, 65536);
    bridge.bind("tcp://127.0.0.1:*");
    const std::string endpoint = bridge.get(zmq::sockopt::last_endpoint);

    zmq::context_t rankContext(1); // as a rank's, not terminated before delivery
    zmq::socket_t lane(rankContext, zmq::socket_type::dealer);
    lane.set(zmq::sockopt::linger, lingerMs);
    lane.set(zmq::sockopt::sndbuf, 65536);
    lane.connect(endpoint);
    Delivery d;
    const std::string payload(4096, 'r');
    for (bool full = false; !full;)
    {
        full = true;
        // a full queue can drain a little into the kernel: retry a while before stopping
        for (int attempt = 0; attempt < 50 && full; ++attempt)
        {
            full = !lane.send(zmq::buffer(payload), zmq::send_flags::dontwait);
            if (full)
            {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        }
        d.sent += full ? 0 : 1;
    }
    lane.close(); // the thread ends

    std::this_thread::sleep_for(std::chrono::seconds(3)); // the bridge is busy elsewhere
    for (;;)
    {
        zmq::pollitem_t item{bridge.handle(), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(2000));
        if (!(item.revents & ZMQ_POLLIN))
        {
            break;
        }
        zmq::message_t identity;
        zmq::message_t body;
        (void)bridge.recv(identity, zmq::recv_flags::none);
        (void)bridge.recv(body, zmq::recv_flags::none);
        ++d.received;
    }
    std::printf("linger %d ms: %d requests queued, %d received\n", lingerMs, d.sent, d.received);
    return d;
}

} // namespace

TEST(LaneSocket, AClosedLaneDeliversItsLastRequestsToABusyBridge)
{
    const Delivery d = CloseWhileTheBridgeIsBusy(kLaneLingerMs);
    EXPECT_GT(d.sent, 1000) << "the lane's queue never filled: the test shows nothing";
    EXPECT_EQ(d.received, d.sent);
}

TEST(LaneSocket, TheBoundedLingerLanesHadLosesThem)
{
    // Why lanes linger without bound: with the 2 s they had, what the bridge had not
    // read when it expired was thrown away (the goodbye's socket still has it, since
    // the bridge has answered that socket's hello just before).
    const Delivery d = CloseWhileTheBridgeIsBusy(kFarewellLingerMs);
    EXPECT_GT(d.sent, 1000);
    EXPECT_LT(d.received, d.sent);
}
