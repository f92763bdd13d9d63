// Started as a rank, it first behaves like a stranger on the bridge's socket:
// sends bytes that are not a phantora message, then a hello with a wrong token
// (and expects to be refused), then runs the real program given as its arguments.
#include "protocol/codec.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <zmq.hpp>

int main(int argc, char** argv)
{
    using namespace phantora::wire;
    if (argc < 2)
    {
        std::fprintf(stderr, "usage: intruder PROGRAM ARGS...\n");
        return 2;
    }
    zmq::context_t ctx(1);
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.connect(std::getenv("PHANTORA_BRIDGE"));
    s.send(zmq::str_buffer("GET / HTTP/1.1\r\n\r\n"), zmq::send_flags::none);
    s.send(zmq::str_buffer(""), zmq::send_flags::none);
    RequestEnvelope hello;
    hello.seq = 1;
    hello.body = Hello{"not-the-token", 0, 1, 0, static_cast<int32_t>(getpid())};
    const std::string bytes = Encode(hello);
    s.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::seconds(10));
    zmq::message_t reply;
    if (!(item.revents & ZMQ_POLLIN) || !s.recv(reply, zmq::recv_flags::none))
    {
        std::fprintf(stderr, "intruder: no answer to a wrong token\n");
        return 3;
    }
    const ReplyEnvelope r = DecodeReply(reply.to_string_view());
    const auto* failure = std::get_if<Failure>(&r.body);
    std::printf("intruder refused: %s\n", failure ? failure->message.c_str() : "(not a failure!)");
    std::fflush(stdout);
    s.close();
    ctx.close();
    execv(argv[1], argv + 1);
    std::perror("intruder: execv");
    return 4;
}
