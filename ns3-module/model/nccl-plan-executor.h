#ifndef NCCL_PLAN_EXECUTOR_H
#define NCCL_PLAN_EXECUTOR_H

#include "nccl/plan.h"
#include "ns3/ptr.h"
#include "ns3/simple-ref-count.h"
#include "phantora-transport.h"

#include <functional>
#include <vector>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief Runs an NCCL plan (nccl/plan.h) on a PhantoraTransport, from Simulator::Now().
 *
 * Transfers start as soon as their dependencies are delivered (after their own
 * delay); the completion callback fires once every transfer is delivered and the
 * plan's fixed latency has elapsed.  The executor keeps itself alive until then.
 * Transfers through the switch (NVLS: Transfer::switchSrcs) go to
 * PhantoraTransport::SendThroughSwitch, the others to Send.
 */
class NcclPlanExecutor : public SimpleRefCount<NcclPlanExecutor>
{
public:
    using DoneCallback = std::function<void()>;

    /// \p rankToGpu maps communicator ranks to GPU ids of the transport.
    static void Start(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                      std::vector<uint32_t> rankToGpu, DoneCallback onDone);

private:
    NcclPlanExecutor(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                     std::vector<uint32_t> rankToGpu, DoneCallback onDone);
    void Launch(uint32_t index);
    void Delivered(uint32_t index);
    void Finish();
    /// The transport's GPU ids of communicator ranks \p ranks.
    std::vector<uint32_t> Gpus(const std::vector<uint32_t>& ranks) const;

    Ptr<PhantoraTransport> m_transport;
    phantora::nccl::Plan m_plan;
    std::vector<uint32_t> m_rankToGpu;
    DoneCallback m_onDone;
    std::vector<uint32_t> m_pendingDeps;           ///< per transfer: dependencies not yet delivered
    std::vector<std::vector<uint32_t>> m_children; ///< per transfer: transfers depending on it
    uint32_t m_remaining{0};
    Ptr<NcclPlanExecutor> m_self; ///< keeps the executor alive while transfers are in flight
};

} // namespace ns3

#endif
