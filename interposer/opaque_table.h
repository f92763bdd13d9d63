// Objects a library lets its callers allocate the size of but not look into
// (cuBLASLt's matmul descriptors, matrix layouts, preferences): a real opaque object,
// zeroed, is handed out, and our reading of what the program set in it is kept beside
// it, found by the opaque's address.
#pragma once

#include "handle_table.h"

#include <memory>

namespace phantora::interposer
{

template <class Opaque, class State> class OpaqueTable
{
public:
    constexpr OpaqueTable() = default;

    Opaque* Create(State state)
    {
        auto d = std::make_unique<Described>();
        d->state = std::move(state);
        Opaque* handle = &d->opaque;
        m_table.Insert(handle, std::move(d));
        return handle;
    }

    /// False if \p opaque was not created here, or already destroyed.
    bool Destroy(Opaque* opaque) { return m_table.Erase(opaque); }

    /// What was kept for \p opaque, or nullptr.
    State* Find(Opaque* opaque) const
    {
        Described* d = m_table.Find(opaque);
        return d ? &d->state : nullptr;
    }

private:
    struct Described
    {
        Opaque opaque{}; // value-initialised: zeroed
        State state{};
    };
    HandleTable<Opaque*, Described> m_table;
};

} // namespace phantora::interposer
