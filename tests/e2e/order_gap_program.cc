// Started as rank 0, it talks to the bridge on raw sockets as a rank's threads (lanes)
// do, and breaks the rule that every request the bridge waits for arrives:
//   skip-seq  thread 0 numbers its requests 1, 2, 4: its request 3 was lost on the way;
//   gap       thread 1 sends order numbers 3, 4, 5 and number 2 never comes;
//   flood     4 more threads say hello (numbers 2 to 5), thread 1 sends 7, 8, 9 and 6
//             never comes, then the 4 send later requests as fast as they can (held by
//             the bridge, which is busy receiving them) until the process is killed.
// It never ends by itself: the bridge must end the run.
#include "protocol/codec.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>
#include <zmq.hpp>

using namespace phantora::wire;

namespace
{

zmq::context_t g_context(1);

struct Lane
{
    uint32_t id{0};
    zmq::socket_t socket;
    uint64_t nextSeq{1};
};

void Send(Lane& lane, uint64_t seq, uint64_t order, Request body)
{
    RequestEnvelope env;
    env.seq = seq;
    env.lane = lane.id;
    env.order = order;
    env.body = std::move(body);
    const std::string bytes = Encode(env);
    lane.socket.send(zmq::buffer(bytes), zmq::send_flags::none);
}

/// Connects lane \p id and says hello with order number \p order; waits for the welcome.
Lane Open(uint32_t id, uint64_t order)
{
    Lane lane;
    lane.id = id;
    lane.socket = zmq::socket_t(g_context, zmq::socket_type::dealer);
    lane.socket.set(zmq::sockopt::linger, 0);
    lane.socket.connect(std::getenv("PHANTORA_BRIDGE"));
    const char* token = std::getenv("PHANTORA_TOKEN");
    Send(lane, lane.nextSeq++, order,
         Hello{token ? token : "", 0, 1, 0, static_cast<int32_t>(getpid())});
    zmq::message_t reply;
    if (!lane.socket.recv(reply, zmq::recv_flags::none) ||
        !std::holds_alternative<Welcome>(DecodeReply(reply.to_string_view()).body))
    {
        std::fprintf(stderr, "order-gap: thread %u was not welcomed\n", id);
        std::_Exit(3);
    }
    return lane;
}

Request Event()
{
    return HostEvent{HostEventKind::Block, 0, kNoTime};
}

} // namespace

int main(int argc, char** argv)
{
    const std::string mode = argc > 1 ? argv[1] : "";
    std::printf("order-gap: pid %d\n", static_cast<int>(getpid()));
    std::fflush(stdout);
    Lane first = Open(0, 0);
    if (mode == "skip-seq")
    {
        Send(first, 2, 1, Event());
        Send(first, 4, 2, Event());
    }
    else if (mode == "gap" || mode == "flood")
    {
        // Every lane says hello before the gap: a hello is answered in order too.
        Lane second = Open(1, 1);
        uint64_t order = 2;
        std::vector<Lane> flooders;
        for (uint32_t t = 0; mode == "flood" && t < 4; ++t)
        {
            flooders.push_back(Open(2 + t, order++));
        }
        const uint64_t missing = order++;
        for (int i = 0; i < 3; ++i)
        {
            Send(second, second.nextSeq++, order++, Event());
        }
        std::printf("order-gap: order number %llu left out\n",
                    static_cast<unsigned long long>(missing));
        std::fflush(stdout);
        if (mode == "flood")
        {
            std::atomic<uint64_t> nextOrder{order};
            std::vector<std::thread> threads;
            for (Lane& lane : flooders)
            {
                threads.emplace_back(
                    [&nextOrder, &lane]
                    {
                        for (;;)
                        {
                            Send(lane, lane.nextSeq++, nextOrder++, Event());
                        }
                    });
            }
            std::printf("order-gap: flooding\n");
            std::fflush(stdout);
            for (auto& t : threads)
            {
                t.join();
            }
        }
    }
    else
    {
        std::fprintf(stderr, "usage: order-gap skip-seq|gap|flood\n");
        return 2;
    }
    for (;;)
    {
        pause();
    }
}
