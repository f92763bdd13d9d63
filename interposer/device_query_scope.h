// Brackets a call that only reads the device's description (count, properties,
// attributes, name, memory size).  In the rank it is a HookScope and the description is
// the bridge's Welcome; in a process that is no rank and answers such queries itself (a
// helper the rank started, the fork server: process_role.h) it neither connects nor
// charges a clock, and the description is the launcher's (PHANTORA_GPU).
#pragma once

#include "hook_scope.h"
#include "process_role.h"

#include <optional>

namespace phantora::interposer
{

class DeviceQueryScope
{
public:
    explicit DeviceQueryScope(const char* call = __builtin_FUNCTION()) : m_call(call)
    {
        if (!ProcessRole::AnswersLocally())
        {
            m_scope.emplace(call);
        }
    }

    const wire::Welcome& Device() const
    {
        return m_scope ? m_scope->Client().Welcome() : ProcessRole::LocalDevice(m_call);
    }

private:
    const char* m_call;
    std::optional<HookScope> m_scope;
};

} // namespace phantora::interposer
