#include "call_charge.h"

namespace phantora::interposer
{

thread_local int CallCharge::t_depth = 0;
thread_local bool CallCharge::t_charged = false;

} // namespace phantora::interposer
