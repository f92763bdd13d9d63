#include "nccl-plan.h"

#include "ns3/abort.h"

namespace ns3
{

NcclPlan MakeRingAllReducePlan(uint32_t nRanks, uint64_t bytes)
{
    NS_ABORT_MSG_IF(nRanks == 0, "a communicator needs at least one rank");
    NcclPlan plan;
    if (nRanks == 1)
    {
        return plan;
    }
    const uint64_t chunk = (bytes + nRanks - 1) / nRanks;
    const uint32_t steps = 2 * (nRanks - 1);
    // transfer index of (step, rank) = step * nRanks + rank
    for (uint32_t step = 0; step < steps; ++step)
    {
        for (uint32_t r = 0; r < nRanks; ++r)
        {
            NcclTransfer t;
            t.src = r;
            t.dst = (r + 1) % nRanks;
            t.bytes = chunk;
            if (step > 0)
            {
                // rank r forwards what it received from its predecessor in the previous step
                const uint32_t pred = (r + nRanks - 1) % nRanks;
                t.deps.push_back((step - 1) * nRanks + pred);
            }
            plan.transfers.push_back(std::move(t));
        }
    }
    return plan;
}

} // namespace ns3
