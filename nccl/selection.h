// NCCL_ALGO / NCCL_PROTO as NCCL reads them.
//
// A spec is a comma-separated list of names (case does not matter); a leading '^'
// turns it into the names to leave out.  Entries of the form "allreduce:tree" apply to
// one collective and are separated by ';' ("allreduce:tree;allgather:ring"); an entry
// without a collective applies to every collective no entry names.  An empty spec
// allows everything.
//
// NCCL knows algorithms Phantora does not model (CollNet, NVLS, PAT): naming them is
// accepted, and they are never chosen, as on a machine without the hardware for them;
// a spec that leaves no modelled algorithm is an error.
#pragma once

#include "config.h"

#include <string>
#include <vector>

namespace phantora::nccl
{

/// The algorithms \p spec allows for \p kind.  Throws std::invalid_argument naming the
/// offending token and what was expected; never returns an empty list.
std::vector<Algorithm> AllowedAlgorithms(const std::string& spec, CollectiveKind kind);

/// The protocols \p spec allows for \p kind (LL, LL128, Simple).  Throws as above.
std::vector<Protocol> AllowedProtocols(const std::string& spec, CollectiveKind kind);

/// Checks \p spec for every collective: throws std::invalid_argument on the first problem.
void ValidateAlgorithmSpec(const std::string& spec);
void ValidateProtocolSpec(const std::string& spec);

} // namespace phantora::nccl
