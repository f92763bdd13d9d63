// NCCL collectives' names as nccl-tests writes them ("all_reduce", ...), for traces and
// diagnostics.
#pragma once

#include "protocol/messages.h"

namespace phantora
{

const char* CollectiveName(wire::CollectiveOp op);

} // namespace phantora
