#ifndef NCCL_CONFIG_H
#define NCCL_CONFIG_H

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief The collectives NCCL offers, as the planner knows them.
 */
enum class NcclCollectiveKind
{
    AllReduce,
    AllGather,     ///< bytes = the whole output buffer (nccl-tests' size)
    ReduceScatter, ///< bytes = the whole input buffer (nccl-tests' size)
    Broadcast,     ///< from rank 0 (the root)
    Reduce,        ///< to rank 0 (the root)
    AllToAll,      ///< bytes = one rank's send buffer; 1/n of it goes to each rank
    SendRecv,      ///< rank 0 sends bytes to rank 1
};

enum class NcclAlgorithm
{
    Ring,
    Tree,
};

enum class NcclProtocol
{
    LL,
    LL128,
    Simple,
};

const char* NcclCollectiveName(NcclCollectiveKind kind);
const char* NcclAlgorithmName(NcclAlgorithm algo);
const char* NcclProtocolName(NcclProtocol proto);

/**
 * \brief Costs of one NCCL protocol, as NCCL's own tuning model has them.
 *
 * Plain numbers (no ns3::Time) so that the bridge's scenario can hold a config
 * without touching ns-3's time resolution.
 */
struct NcclProtocolParams
{
    double baseLatencyNs{0};         ///< once per collective: kernel launch and teardown
    double stepLatencyNs{0};         ///< per pipeline step: flag write, poll, SM hand-off
    double channelBytesPerSecond{0}; ///< data one channel's SMs can move; 0: no cap
};

/**
 * \brief Every tunable of the NCCL model.  Filled from the scenario's [nccl] table;
 * the defaults are NCCL's own orders of magnitude, not a fit to any measurement.
 */
struct NcclConfig
{
    std::string algorithm{};  ///< NCCL_ALGO: "" (automatic), "ring" or "tree"
    std::string protocol{};   ///< NCCL_PROTO: "" (automatic), "ll", "ll128" or "simple"
    uint32_t minChannels{1};  ///< NCCL_MIN_NCHANNELS
    uint32_t maxChannels{16}; ///< NCCL_MAX_NCHANNELS: channels the communicator has
    /// NCCL gives a channel at least this much data before using another one.
    uint64_t minBytesPerChannel{64 * 1024};
    uint64_t chunkBytes{512 * 1024}; ///< data of one pipeline slice per channel (Simple)
    /// Upper bound of pipeline chunks per channel: more cost simulation time, not accuracy.
    uint32_t maxChunksPerChannel{64};
    NcclProtocolParams ll{6600, 600, 8e9};
    NcclProtocolParams ll128{14000, 1900, 18e9};
    NcclProtocolParams simple{8400, 3400, 24e9};
    /// Tree only: extra cost per tree level crossed (network hop between nodes).
    double treeLevelLatencyNs{2000};

    const NcclProtocolParams& Params(NcclProtocol p) const
    {
        return p == NcclProtocol::LL ? ll : (p == NcclProtocol::LL128 ? ll128 : simple);
    }
};

/// Wire bytes for \p dataBytes of payload: LL sends an 8-byte flag with every 8 bytes
/// of data, LL128 uses 8 of every 128 bytes for flags, Simple sends the data as is.
uint64_t NcclWireBytes(NcclProtocol proto, uint64_t dataBytes);

} // namespace ns3

#endif
