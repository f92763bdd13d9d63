// The transport one collective runs on: it forwards every transfer to the network's
// real transport and remembers, per pair of GPUs, when the collective first sent and
// last delivered there.  One per collective, so that a replayed collective starts with
// a clean record and traces show the network side of each collective.
#pragma once

#include "ns3/phantora-transport.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace phantora
{

/// What one collective did between two GPUs (ns-3 time, picoseconds).
struct PairActivity
{
    int64_t firstSendPs{0};
    int64_t lastDeliveryPs{0};
    uint64_t bytes{0};
    uint32_t transfers{0};
};

class FlowRecordingTransport : public ns3::PhantoraTransport
{
public:
    static ns3::TypeId GetTypeId();

    FlowRecordingTransport() = default;
    void SetTarget(ns3::Ptr<ns3::PhantoraTransport> target) { m_target = std::move(target); }

    void Send(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes,
              DeliveredCallback onDelivered) override;
    /// Recorded as a transfer from every source to every other destination.
    void SendThroughSwitch(const std::vector<uint32_t>& srcGpus,
                           const std::vector<uint32_t>& dstGpus, uint64_t bytes,
                           DeliveredCallback onDelivered) override;
    uint32_t GetNGpus() const override { return m_target->GetNGpus(); }
    uint64_t GetFlowNumbering() const override { return m_target->GetFlowNumbering(); }
    void SetFlowNumbering(uint64_t flowsSent) override { m_target->SetFlowNumbering(flowsSent); }

    /// (source GPU, destination GPU) -> what crossed between them.
    const std::map<std::pair<uint32_t, uint32_t>, PairActivity>& Pairs() const { return m_pairs; }

protected:
    void DoDispose() override;

private:
    /// The records of (src, dst), started now if new.
    PairActivity& Record(uint32_t srcGpu, uint32_t dstGpu, uint64_t bytes);

    ns3::Ptr<ns3::PhantoraTransport> m_target;
    std::map<std::pair<uint32_t, uint32_t>, PairActivity> m_pairs;
};

} // namespace phantora
