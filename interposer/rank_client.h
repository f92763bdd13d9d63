// The rank's connection to the bridge (ZeroMQ DEALER).  Opened at the first
// intercepted CUDA/NCCL call, so that helper processes that inherit
// LD_PRELOAD but never touch the GPU (shells, compilers) stay invisible.
#pragma once

#include "protocol/messages.h"

#include <mutex>
#include <string>
#include <zmq.hpp>

namespace phantora::interposer
{

class RankClient
{
public:
    /// The connected client; the first call connects and says hello.  A rank that
    /// cannot reach its bridge cannot produce a meaningful result: it exits with a
    /// message instead of running on with made-up answers.
    static RankClient& Get();
    /// True when this process was started for simulation (PHANTORA_BRIDGE is set).
    static bool Configured();

    ~RankClient();

    /// Fire-and-forget: asynchronous GPU work.
    void Post(wire::Request body);
    /// Waits for the bridge's answer.
    wire::Reply Call(wire::Request body);

    const wire::Welcome& Welcome() const { return m_welcome; }
    int Rank() const { return m_rank; }

    /// Reports the device-memory peak and closes the connection.
    void Goodbye(uint64_t peakDeviceBytes);

private:
    RankClient();
    void SendLocked(uint64_t seq, wire::Request body);
    wire::Reply ReceiveLocked(uint64_t seq, const char* what);

    std::mutex m_mutex;
    zmq::context_t m_context;
    zmq::socket_t m_socket;
    uint64_t m_nextSeq{1};
    int m_rank{0};
    int m_launcherPid{0};
    bool m_closed{false};
    wire::Welcome m_welcome;
};

[[noreturn]] void Fatal(const std::string& message);

} // namespace phantora::interposer
