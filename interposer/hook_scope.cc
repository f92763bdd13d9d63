#include "hook_scope.h"

namespace phantora::interposer
{
thread_local int HookScope::t_depth = 0;
}
