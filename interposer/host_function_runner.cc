#include "host_function_runner.h"

#include "hook_scope.h"
#include "host_time.h"
#include "never_destroyed.h"

#include <map>
#include <memory>
#include <pthread.h>

namespace phantora::interposer
{

namespace
{

struct Runners
{
    std::mutex mutex;
    std::map<uint64_t, std::unique_ptr<HostFunctionRunner>> byStream;
};

// Never destroyed, nor are the runners in it: their threads wait on them until the
// process ends.
constinit NeverDestroyed<Runners> g_runners;

} // namespace

HostFunctionRunner& HostFunctionRunner::For(uint64_t stream)
{
    Runners& runners = *g_runners;
    std::lock_guard lock(runners.mutex);
    std::unique_ptr<HostFunctionRunner>& r = runners.byStream[stream];
    if (!r)
    {
        r = std::make_unique<HostFunctionRunner>(stream);
    }
    return *r;
}

HostFunctionRunner::HostFunctionRunner(uint64_t stream) : m_stream(stream)
{
    pthread_t t{};
    if (pthread_create(&t, nullptr, &HostFunctionRunner::Main, this) != 0)
    {
        Fatal("cannot start the host-function thread");
    }
    pthread_detach(t);
}

void HostFunctionRunner::Push(Call c)
{
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(std::move(c));
    }
    m_ready.notify_one();
}

void* HostFunctionRunner::Main(void* self)
{
    static_cast<HostFunctionRunner*>(self)->Run();
    return nullptr;
}

void HostFunctionRunner::Run()
{
    // The runtime's thread, not one of the program's: the host functions it runs are
    // timed by this machine's CPU (a recording never saw this thread's calls).
    HostTime::Get().MeasureThisThread();
    for (;;)
    {
        Call c;
        {
            std::unique_lock lock(m_mutex);
            m_ready.wait(lock, [this] { return !m_queue.empty(); });
            c = std::move(m_queue.front());
            m_queue.pop_front();
        }
        {
            HookScope scope;
            wire::Reply reply = scope.Client().Call(wire::EventWait{c.record, false});
            if (const auto* r = std::get_if<wire::Resume>(&reply))
            {
                SimClock::Get().AdvanceTo(r->clockNs);
            }
        }
        c.fn();
        HookScope scope;
        scope.Client().Post(wire::HostFunctionDone{c.id});
    }
}

} // namespace phantora::interposer
