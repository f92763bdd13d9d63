#include "nccl-plan-executor.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

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
    Ptr<NcclPlanExecutor> exec = Ptr<NcclPlanExecutor>(
        new NcclPlanExecutor(transport, std::move(plan), std::move(rankToGpu), std::move(onDone)),
        false);
    exec->m_self = exec;
    if (exec->m_remaining == 0)
    {
        Simulator::Schedule(FixedLatency(exec->m_plan), &NcclPlanExecutor::Finish, exec);
        return;
    }
    for (uint32_t i = 0; i < exec->m_plan.transfers.size(); ++i)
    {
        if (exec->m_pendingDeps[i] == 0)
        {
            exec->Launch(i);
        }
    }
}

NcclPlanExecutor::NcclPlanExecutor(Ptr<PhantoraTransport> transport, phantora::nccl::Plan plan,
                                   std::vector<uint32_t> rankToGpu, DoneCallback onDone)
    : m_transport(transport), m_plan(std::move(plan)), m_rankToGpu(std::move(rankToGpu)),
      m_onDone(std::move(onDone))
{
    const auto n = static_cast<uint32_t>(m_plan.transfers.size());
    m_pendingDeps.resize(n, 0);
    m_children.resize(n);
    m_remaining = n;
    for (uint32_t i = 0; i < n; ++i)
    {
        const phantora::nccl::Transfer& t = m_plan.transfers[i];
        bool outside = t.src >= m_rankToGpu.size() || t.dst >= m_rankToGpu.size();
        for (const auto* group : {&t.switchSrcs, &t.switchDsts})
        {
            for (uint32_t r : *group)
            {
                outside = outside || r >= m_rankToGpu.size();
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
            Launch(child);
        }
    }
    if (--m_remaining == 0)
    {
        Simulator::Schedule(FixedLatency(m_plan), &NcclPlanExecutor::Finish, this);
    }
}

void NcclPlanExecutor::Finish()
{
    // Release the self-reference last: the callback may start new work but must not see us gone.
    Ptr<NcclPlanExecutor> keep = m_self;
    m_self = nullptr;
    if (m_onDone)
    {
        m_onDone();
    }
}

} // namespace ns3
