#ifndef NCCL_TUNING_H
#define NCCL_TUNING_H

#include "nccl-config.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief What NCCL would run a collective with: algorithm, protocol, channel count.
 */
struct NcclChoice
{
    NcclAlgorithm algorithm{NcclAlgorithm::Ring};
    NcclProtocol protocol{NcclProtocol::Simple};
    uint32_t nChannels{1};
    double estimatedNs{0}; ///< the tuning model's estimate, for logs and tests
};

/// The shape of a communicator the tuning model needs.
struct NcclCommShape
{
    uint32_t nRanks{1};
    uint32_t ranksPerNode{1}; ///< ranks sharing a node (NVLink domain); nRanks when one node
};

/// Channels NCCL uses for \p bytes: as many as keep minBytesPerChannel each, within
/// [minChannels, maxChannels].
uint32_t NcclChannelsFor(const NcclConfig& config, uint64_t bytes);

/// The tuning model's time for one algorithm/protocol (NCCL's src/graph/tuning.cc in
/// spirit: latency + bytes on the bus / bandwidth).
double NcclEstimateNs(NcclCollectiveKind kind, const NcclCommShape& shape, uint64_t bytes,
                      NcclAlgorithm algo, NcclProtocol proto, uint32_t nChannels,
                      const NcclConfig& config);

/// NCCL's choice: the fastest estimate among the algorithms and protocols the config
/// (NCCL_ALGO, NCCL_PROTO) allows.  Throws std::invalid_argument on an unknown name.
NcclChoice ChooseNccl(NcclCollectiveKind kind, const NcclCommShape& shape, uint64_t bytes,
                      const NcclConfig& config);

} // namespace ns3

#endif
