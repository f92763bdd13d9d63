// Which endpoints count as this host only: across the network phantora-cluster needs
// CURVE keys (bridge/loopback_endpoint.h).
#include "loopback_endpoint.h"

#include <gtest/gtest.h>

using namespace phantora;

TEST(LoopbackEndpoint, LoopbackHostsAreTheHostOnly)
{
    for (const char* host : {"127.0.0.1", "127.3.2.1", "localhost", "::1", "[::1]"})
    {
        EXPECT_TRUE(IsLoopbackHost(host)) << host;
    }
    for (const char* host :
         {"0.0.0.0", "*", "10.0.0.7", "128.0.0.1", "eth0", "", "127.1", "::", "localhost.example"})
    {
        EXPECT_FALSE(IsLoopbackHost(host)) << host;
    }
}

TEST(LoopbackEndpoint, TcpEndpointsAreJudgedByTheirHostAndLocalTransportsNeverLeave)
{
    EXPECT_TRUE(IsLoopbackEndpoint("tcp://127.0.0.1:5555"));
    EXPECT_TRUE(IsLoopbackEndpoint("tcp://127.0.0.1:*"));
    EXPECT_TRUE(IsLoopbackEndpoint("tcp://[::1]:5555"));
    EXPECT_TRUE(IsLoopbackEndpoint("tcp://localhost:5555"));
    EXPECT_TRUE(IsLoopbackEndpoint("ipc:///tmp/phantora.sock"));
    EXPECT_TRUE(IsLoopbackEndpoint("inproc://bridge"));
    EXPECT_FALSE(IsLoopbackEndpoint("tcp://0.0.0.0:5555"));
    EXPECT_FALSE(IsLoopbackEndpoint("tcp://*:5555"));
    EXPECT_FALSE(IsLoopbackEndpoint("tcp://10.1.2.3:5555"));
    EXPECT_FALSE(IsLoopbackEndpoint("tcp://eth0:5555"));
    EXPECT_FALSE(IsLoopbackEndpoint("tcp://127.0.0.1;10.1.2.3:5555"));
    EXPECT_FALSE(IsLoopbackEndpoint("tcp://127.0.0.1"));
    EXPECT_FALSE(IsLoopbackEndpoint("udp://127.0.0.1:5555"));
}
