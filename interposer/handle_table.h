// The objects behind the opaque handles a library hands its callers (cuBLAS and
// cuBLASLt handles and descriptors, CUDA events, NCCL communicators), by handle.
//
// Usable from any hook at any time, from any thread: a namespace-scope
// `constinit HandleTable<...>` is ready before any static constructor runs and is never
// destroyed (never_destroyed.h says why).  Objects keep their address while they are in
// the table, so a hook may use what Find returned after the lock is released; as with
// the real libraries, a program that destroys a handle while another thread uses it
// is wrong.
#pragma once

#include "never_destroyed.h"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>

namespace phantora::interposer
{

template <class Handle, class Object> class HandleTable
{
public:
    constexpr HandleTable() = default;
    HandleTable(const HandleTable&) = delete;
    HandleTable& operator=(const HandleTable&) = delete;

    /// Keeps \p object under \p handle and returns it; nullptr (and \p object is freed)
    /// if the handle already names one, which keeps its object.
    Object* Insert(Handle handle, std::unique_ptr<Object> object)
    {
        State& s = *m_state;
        std::lock_guard lock(s.mutex);
        auto [it, inserted] = s.objects.try_emplace(handle, std::move(object));
        return inserted ? it->second.get() : nullptr;
    }

    /// For handles that are the address of the object they name: keeps \p object and
    /// returns its handle.
    Handle Adopt(std::unique_ptr<Object> object) requires std::is_same_v<Handle, Object*>
    {
        Object* handle = object.get();
        Insert(handle, std::move(object));
        return handle;
    }

    /// The object \p handle names, or nullptr.
    Object* Find(Handle handle) const
    {
        State& s = *m_state;
        std::lock_guard lock(s.mutex);
        auto it = s.objects.find(handle);
        return it == s.objects.end() ? nullptr : it->second.get();
    }

    /// Removes \p handle and hands its object to the caller (nullptr if it named none).
    std::unique_ptr<Object> Take(Handle handle)
    {
        State& s = *m_state;
        std::lock_guard lock(s.mutex);
        auto it = s.objects.find(handle);
        if (it == s.objects.end())
        {
            return nullptr;
        }
        std::unique_ptr<Object> object = std::move(it->second);
        s.objects.erase(it);
        return object;
    }

    /// Removes \p handle and frees its object; false if it named none.
    bool Erase(Handle handle) { return Take(handle) != nullptr; }

    std::size_t Size() const
    {
        State& s = *m_state;
        std::lock_guard lock(s.mutex);
        return s.objects.size();
    }

private:
    struct State
    {
        std::mutex mutex;
        std::map<Handle, std::unique_ptr<Object>> objects;
    };
    NeverDestroyed<State> m_state;
};

} // namespace phantora::interposer
