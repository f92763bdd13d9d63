#ifndef NCCL_PLAN_EXECUTOR_H
#define NCCL_PLAN_EXECUTOR_H

#include "nccl/plan.h"
#include "ns3/nstime.h"
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
 * delay).  Each rank ends its part of the collective on its own, as NCCL's kernel on
 * that GPU does: once the last transfer it sends or receives is delivered and the plan's
 * fixed latency has elapsed (a broadcast's root ends before the chain's tail).  A plan of
 * several calls back to back (Plan::callStarts) starts a rank's sends of call k once
 * its own part of call k-1 ended.  The completion callback fires once every rank ended
 * every call, with each rank's ends; the executor keeps itself alive until then.
 * Transfers through the switch (NVLS: Transfer::switchSrcs) go to
 * PhantoraTransport::SendThroughSwitch, the others to Send.
 */
class NcclPlanExecutor : public SimpleRefCount<NcclPlanExecutor>
{
public:
    using DoneCallback = std::function<void()>;
    /// Ends of each call ([call][communicator rank], absolute simulation times).
    using RankEnds = std::vector<std::vector<Time>>;
    using RankEndsCallback = std::function<void(const RankEnds&)>;

    /// \p rankToGpu maps communicator ranks to GPU ids of the transport.
    static void Start(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                      std::vector<uint32_t> rankToGpu, DoneCallback onDone);
    /// As above, telling \p onDone when each rank ended each call.
    static void Start(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                      std::vector<uint32_t> rankToGpu, RankEndsCallback onDone);

private:
    NcclPlanExecutor(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                     std::vector<uint32_t> rankToGpu, RankEndsCallback onDone);
    /// Transfer \p index has its dependencies: sends it once its senders started its call.
    void Ready(uint32_t index);
    void Launch(uint32_t index);
    void Delivered(uint32_t index);
    /// Rank \p rank starts call \p call: its parked sends go.
    void OpenGate(uint32_t call, uint32_t rank);
    /// Rank \p rank's part of call \p call is delivered: it ends after the fixed latency.
    void RankDelivered(uint32_t call, uint32_t rank);
    void RankEnded(uint32_t call, uint32_t rank);
    void Finish();
    /// The transport's GPU ids of communicator ranks \p ranks.
    std::vector<uint32_t> Gpus(const std::vector<uint32_t>& ranks) const;
    /// The communicator ranks transfer \p index sends from, and all it involves.
    std::vector<uint32_t> Senders(uint32_t index) const;
    std::vector<uint32_t> Involved(uint32_t index) const;

    Ptr<PhantoraTransport> m_transport;
    phantora::nccl::Plan m_plan;
    std::vector<uint32_t> m_rankToGpu;
    RankEndsCallback m_onDone;
    std::vector<uint32_t> m_pendingDeps;           ///< per transfer: dependencies not yet delivered
    std::vector<std::vector<uint32_t>> m_children; ///< per transfer: transfers depending on it
    std::vector<uint32_t> m_callOf;                ///< per transfer: its call
    std::vector<uint32_t> m_closedGates;           ///< per transfer: senders not in its call yet
    std::vector<std::vector<uint32_t>> m_rankLeft; ///< [call][rank]: its transfers not delivered
    std::vector<std::vector<bool>> m_gateOpen;     ///< [call][rank]: the rank started the call
    std::vector<std::vector<std::vector<uint32_t>>> m_parked; ///< [call][rank]: sends waiting
    RankEnds m_rankEnds;
    uint32_t m_partsLeft{0};      ///< (call, rank) parts not ended
    Ptr<NcclPlanExecutor> m_self; ///< keeps the executor alive while transfers are in flight
};

} // namespace ns3

#endif
