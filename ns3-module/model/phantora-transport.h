#ifndef PHANTORA_TRANSPORT_H
#define PHANTORA_TRANSPORT_H

#include "ns3/object.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief Moves bytes between two GPUs of a simulated cluster.
 *
 * The NCCL layer and the bridge only see this interface, so the same collective
 * runs over the packet-level network (ns-3 devices, queues, MTU-sized packets) or
 * a flow-level one (max-min fair sharing) without knowing which.
 */
class PhantoraTransport : public Object
{
public:
    /// Called once, at the simulated instant the last byte reaches the receiver.
    using DeliveredCallback = std::function<void()>;

    static TypeId GetTypeId();
    ~PhantoraTransport() override;

    /**
     * Start sending \p bytes from GPU \p srcGpu to GPU \p dstGpu at Simulator::Now().
     * \p bytes may be 0: delivery then costs the path's latency only.
     */
    virtual void Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
                      DeliveredCallback onDelivered) = 0;

    /**
     * NVLink SHARP (NVLS): every GPU of \p srcGpus sends \p bytes up its link to the
     * NVSwitch all of them and \p dstGpus are attached to; the switch reduces what arrives
     * (with one source it just copies) and sends the \p bytes of result down to every GPU
     * of \p dstGpus (multicast).  Each link thus carries \p bytes once, whatever the group's
     * size.  \p onDelivered is called once every destination has the result.  FlowTransport
     * and PacketTransport model it; others throw std::logic_error (the base class).
     */
    virtual void SendThroughSwitch(const std::vector<uint32_t>& srcGpus,
                                   const std::vector<uint32_t>& dstGpus, uint64_t bytes,
                                   DeliveredCallback onDelivered);

    /// Number of GPUs this transport connects (GPU ids are 0 .. n-1).
    virtual uint32_t GetNGpus() const = 0;

    /**
     * Flows sent so far.  A flow's ECMP path depends on its number, so a network
     * rebuilt at a checkpoint (the bridge's replay) continues the numbering with
     * SetFlowNumbering(); only allowed while no flow is in flight.
     */
    virtual uint64_t GetFlowNumbering() const = 0;
    virtual void SetFlowNumbering(uint64_t flowsSent) = 0;
};

} // namespace ns3

#endif
