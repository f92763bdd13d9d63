#include "nccl-plan-executor.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NcclPlanExecutor");

namespace
{

Time FixedLatency(const phantora::nccl::Plan& plan)
{
    return PicoSeconds(plan.fixedLatency.count());
}

} // namespace

void NcclPlanExecutor::Start(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                             std::vector<uint32_t> rankToGpu, DoneCallback onDone)
{
    Start(std::move(transport), std::move(plan), std::move(rankToGpu),
          RankEndsCallback(
              [onDone = std::move(onDone)](const RankEnds&)
              {
                  if (onDone)
                  {
                      onDone();
                  }
              }));
}

void NcclPlanExecutor::Start(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                             std::vector<uint32_t> rankToGpu, RankEndsCallback onDone)
{
    Ptr<NcclPlanExecutor> exec = Ptr<NcclPlanExecutor>(
        new NcclPlanExecutor(transport, std::move(plan), std::move(rankToGpu), std::move(onDone)),
        false);
    exec->m_self = exec;
    if (exec->m_partsLeft == 0)
    {
        Simulator::Schedule(FixedLatency(exec->m_plan), &NcclPlanExecutor::Finish, exec);
        return;
    }
    // Every rank starts the first call now; a rank with nothing to move in it ends after
    // the fixed latency.
    for (uint32_t r = 0; r < exec->m_rankToGpu.size(); ++r)
    {
        exec->OpenGate(0, r);
    }
    for (uint32_t i = 0; i < exec->m_plan.transfers.size(); ++i)
    {
        if (exec->m_pendingDeps[i] == 0)
        {
            exec->Ready(i); // a later call's waits for its senders to end the one before
        }
    }
}

NcclPlanExecutor::NcclPlanExecutor(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                                   std::vector<uint32_t> rankToGpu, RankEndsCallback onDone)
    : m_transport(transport), m_plan(std::move(plan)), m_rankToGpu(std::move(rankToGpu)),
      m_onDone(std::move(onDone))
{
    const auto n = static_cast<uint32_t>(m_plan.transfers.size());
    const auto& starts = m_plan.callStarts;
    for (std::size_t k = 0; k < starts.size(); ++k)
    {
        if ((k == 0 && starts[k] != 0) || (k > 0 && starts[k] <= starts[k - 1]) || starts[k] > n)
        {
            throw std::invalid_argument("NCCL plan call " + std::to_string(k) +
                                        " starts at transfer " + std::to_string(starts[k]) +
                                        ": calls must start at 0 and ascend within the plan");
        }
    }
    const auto calls = static_cast<uint32_t>(std::max<std::size_t>(starts.size(), 1));
    const auto ranks = static_cast<uint32_t>(m_rankToGpu.size());
    m_pendingDeps.resize(n, 0);
    m_children.resize(n);
    m_callOf.resize(n, 0);
    m_closedGates.resize(n, 0);
    m_rankLeft.assign(calls, std::vector<uint32_t>(ranks, 0));
    m_gateOpen.assign(calls, std::vector<bool>(ranks, false));
    m_parked.assign(calls, std::vector<std::vector<uint32_t>>(ranks));
    m_rankEnds.assign(calls, std::vector<Time>(ranks, Time(0)));
    m_partsLeft = calls * ranks;
    uint32_t call = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        while (call + 1 < starts.size() && i >= starts[call + 1])
        {
            ++call;
        }
        m_callOf[i] = call;
        const phantora::nccl::Transfer& t = m_plan.transfers[i];
        bool outside = t.src >= ranks || t.dst >= ranks;
        for (const auto* group : {&t.switchSrcs, &t.switchDsts})
        {
            for (uint32_t r : *group)
            {
                outside = outside || r >= ranks;
            }
        }
        if (t.switchSrcs.empty() != t.switchDsts.empty())
        {
            throw std::invalid_argument("NCCL plan transfer " + std::to_string(i) +
                                        " goes through the switch with no source or no "
                                        "destination");
        }
        if (outside)
        {
            throw std::invalid_argument("NCCL plan transfer " + std::to_string(i) +
                                        " names a rank outside the communicator");
        }
        for (uint32_t d : t.deps)
        {
            if (d >= i)
            {
                throw std::invalid_argument("NCCL plan transfer " + std::to_string(i) +
                                            " depends on a later one (" + std::to_string(d) +
                                            "): plans must be topologically ordered");
            }
            m_children[d].push_back(i);
            ++m_pendingDeps[i];
        }
        for (uint32_t r : Involved(i))
        {
            ++m_rankLeft[call][r];
        }
    }
}

std::vector<uint32_t> NcclPlanExecutor::Senders(uint32_t index) const
{
    const phantora::nccl::Transfer& t = m_plan.transfers[index];
    return t.switchSrcs.empty() ? std::vector<uint32_t>{t.src} : t.switchSrcs;
}

std::vector<uint32_t> NcclPlanExecutor::Involved(uint32_t index) const
{
    const phantora::nccl::Transfer& t = m_plan.transfers[index];
    std::vector<uint32_t> ranks{t.src, t.dst};
    ranks.insert(ranks.end(), t.switchSrcs.begin(), t.switchSrcs.end());
    ranks.insert(ranks.end(), t.switchDsts.begin(), t.switchDsts.end());
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
}

void NcclPlanExecutor::Ready(uint32_t index)
{
    const uint32_t call = m_callOf[index];
    uint32_t closed = 0;
    for (uint32_t s : Senders(index))
    {
        if (!m_gateOpen[call][s])
        {
            m_parked[call][s].push_back(index);
            ++closed;
        }
    }
    m_closedGates[index] = closed;
    if (closed == 0)
    {
        Launch(index);
    }
}

void NcclPlanExecutor::OpenGate(uint32_t call, uint32_t rank)
{
    m_gateOpen[call][rank] = true;
    if (m_rankLeft[call][rank] == 0)
    {
        RankDelivered(call, rank); // nothing of it left to move (or nothing at all)
    }
    std::vector<uint32_t> parked = std::move(m_parked[call][rank]);
    for (uint32_t index : parked)
    {
        if (--m_closedGates[index] == 0)
        {
            Launch(index);
        }
    }
}

void NcclPlanExecutor::Launch(uint32_t index)
{
    const phantora::nccl::Transfer& t = m_plan.transfers[index];
    auto send = [this, index]()
    {
        const phantora::nccl::Transfer& tr = m_plan.transfers[index];
        NS_LOG_LOGIC("transfer " << index << " " << tr.src << "->" << tr.dst << " " << tr.bytes
                                 << " B at " << Simulator::Now());
        const Time earliest = Simulator::Now() + PicoSeconds(tr.minDuration.count());
        auto delivered = [this, index, earliest]()
        {
            // the SMs may still be copying what the link already took
            if (Simulator::Now() < earliest)
            {
                Simulator::Schedule(earliest - Simulator::Now(), &NcclPlanExecutor::Delivered, this,
                                    index);
                return;
            }
            Delivered(index);
        };
        if (!tr.switchSrcs.empty())
        {
            m_transport->SendThroughSwitch(Gpus(tr.switchSrcs), Gpus(tr.switchDsts), tr.bytes,
                                           std::move(delivered));
            return;
        }
        m_transport->Send(m_rankToGpu[tr.src], m_rankToGpu[tr.dst], tr.bytes, std::move(delivered));
    };
    // Converted before the test: a delay below the Time resolution rounds to none.
    const Time delay = PicoSeconds(t.delay.count());
    if (delay.IsZero())
    {
        send();
    }
    else
    {
        Simulator::Schedule(delay, send);
    }
}

std::vector<uint32_t> NcclPlanExecutor::Gpus(const std::vector<uint32_t>& ranks) const
{
    std::vector<uint32_t> gpus;
    gpus.reserve(ranks.size());
    for (uint32_t r : ranks)
    {
        gpus.push_back(m_rankToGpu[r]);
    }
    return gpus;
}

void NcclPlanExecutor::Delivered(uint32_t index)
{
    for (uint32_t child : m_children[index])
    {
        if (--m_pendingDeps[child] == 0)
        {
            Ready(child);
        }
    }
    const uint32_t call = m_callOf[index];
    for (uint32_t r : Involved(index))
    {
        if (--m_rankLeft[call][r] == 0 && m_gateOpen[call][r])
        {
            RankDelivered(call, r);
        }
    }
}

void NcclPlanExecutor::RankDelivered(uint32_t call, uint32_t rank)
{
    Simulator::Schedule(FixedLatency(m_plan), &NcclPlanExecutor::RankEnded, this, call, rank);
}

void NcclPlanExecutor::RankEnded(uint32_t call, uint32_t rank)
{
    m_rankEnds[call][rank] = Simulator::Now();
    if (call + 1 < m_rankEnds.size())
    {
        OpenGate(call + 1, rank);
    }
    if (--m_partsLeft == 0)
    {
        Finish();
    }
}

void NcclPlanExecutor::Finish()
{
    // Release the self-reference last: the callback may start new work but must not see us gone.
    Ptr<NcclPlanExecutor> keep = m_self;
    m_self = nullptr;
    if (m_onDone)
    {
        m_onDone(m_rankEnds);
    }
}

} // namespace ns3
