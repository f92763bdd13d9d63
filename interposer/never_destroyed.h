// Process-wide interposer state that any hook may reach, whenever it runs.
//
// Hooks run outside the order C++ gives static objects: another library's static
// constructor may call cudaEventCreate or pthread_create before this library's namespace-
// scope objects are constructed, and another library's static destructor (or a thread
// joined while the process exits) may call cudaEventDestroy or ncclCommDestroy after
// ours are destroyed.  A NeverDestroyed<T> is constant-initialised (nothing runs before
// it is usable: it can be a namespace-scope `constinit` variable), builds its T on first
// use from whichever thread comes first, and never destroys it: the memory goes back to
// the system with the process, and no hook ever sees a destroyed T.
#pragma once

#include <atomic>
#include <memory>
#include <type_traits>

namespace phantora::interposer
{

template <class T> class NeverDestroyed
{
public:
    constexpr NeverDestroyed() = default;
    NeverDestroyed(const NeverDestroyed&) = delete;
    NeverDestroyed& operator=(const NeverDestroyed&) = delete;

    /// The T, default-constructed by the first caller.
    T& Get() const
    {
        T* t = m_object.load(std::memory_order_acquire);
        if (t)
        {
            return *t;
        }
        // Threads that race here each build one; the first to publish it wins and the
        // others free theirs.  T's constructor must therefore have no effects beyond itself.
        auto fresh = std::make_unique<T>();
        if (m_object.compare_exchange_strong(t, fresh.get(), std::memory_order_acq_rel,
                                             std::memory_order_acquire))
        {
            return *fresh.release();
        }
        return *t;
    }

    T& operator*() const { return Get(); }
    T* operator->() const { return &Get(); }

private:
    mutable std::atomic<T*> m_object{nullptr};
};

// Nothing to run at exit, so nothing that a later hook could find destroyed.
static_assert(std::is_trivially_destructible_v<NeverDestroyed<int>>);

} // namespace phantora::interposer
