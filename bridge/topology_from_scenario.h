// The ns-3 cluster graph a scenario's [topology] table describes.  Kept apart from the
// loader so that the loader stays free of ns-3, and apart from NetworkModel so that
// scripts, benchmarks and tests build exactly the network a scenario run would use.
#pragma once

#include "ns3/cluster-topology.h"
#include "ns3/phantora-transport.h"
#include "ns3/ptr.h"
#include "scenario.h"

namespace phantora
{

/// Builds the topology of \p scenario and checks that every GPU can reach every other.
/// GPU ids are node-major (GPU g of node n is n * gpusPerNode + g), as NCCL's rank
/// order across nodes expects.  Throws ScenarioError naming the file, the line of the
/// [topology] table (or of the link at fault) and the GPUs that cannot reach each other.
ns3::Ptr<ns3::ClusterTopology> BuildTopology(const Scenario& scenario);

/// Installs the scenario's [network] transport ("flow" or "packet", with its MTU and
/// header size) on \p topology.
ns3::Ptr<ns3::PhantoraTransport> InstallTransport(const Scenario& scenario,
                                                  ns3::Ptr<ns3::ClusterTopology> topology);

} // namespace phantora
