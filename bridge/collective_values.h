// The real results of small NCCL collectives whose members all sent their send
// buffers' bytes (wire::NcclCollective::values): what each member's receive buffer
// holds afterwards, computed as NCCL would.
#pragma once

#include "protocol/messages.h"

#include <optional>
#include <string>
#include <vector>

namespace phantora
{

/// Bytes of one element of \p t (0: unknown type).
std::size_t DataTypeBytes(wire::DataType t);

/// Element-wise reduction of \p inputs (all of one size, a whole number of elements)
/// with \p op over \p type; nullopt when the type cannot be reduced here (fp8) or the
/// sizes do not fit.  Half and bfloat16 are reduced in float and rounded to nearest
/// even; integer averages truncate, as integer division does.
std::optional<std::string> Reduce(wire::DataType type, wire::RedOp op,
                                  const std::vector<std::string>& inputs);

/// Each member's receive-buffer bytes after \p op, given every member's send buffer
/// (\p inputs, in communicator rank order).  A member whose receive buffer the
/// operation does not write (a reduce's non-roots) gets nullopt; so does everyone when
/// the result cannot be computed (sizes that do not fit, fp8 reductions).
std::vector<std::optional<std::string>> CollectiveResults(wire::CollectiveOp op,
                                                          wire::DataType type, wire::RedOp redOp,
                                                          int root,
                                                          const std::vector<std::string>& inputs);

} // namespace phantora
