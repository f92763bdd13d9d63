// The thread that runs one stream's host functions (cudaLaunchHostFunc,
// cudaStreamAddCallback), in order: one per stream, so that streams never wait for each
// other's callbacks.  host_functions.cc says how a function is timed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

namespace phantora::interposer
{

class HostFunctionRunner
{
public:
    struct Call
    {
        std::function<void()> fn;
        uint64_t record{0}; ///< done when the stream reached the function
        uint64_t id{0};     ///< the bridge's hold
    };

    /// The runner of \p stream, started on first use.  Never destroyed: its thread waits
    /// on it until the process ends.
    static HostFunctionRunner& For(uint64_t stream);

    explicit HostFunctionRunner(uint64_t stream);
    HostFunctionRunner(const HostFunctionRunner&) = delete;
    HostFunctionRunner& operator=(const HostFunctionRunner&) = delete;

    void Push(Call c);

private:
    static void* Main(void* self);
    [[noreturn]] void Run();

    uint64_t m_stream;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<Call> m_queue;
};

} // namespace phantora::interposer
