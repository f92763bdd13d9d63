// The textbook ring all-reduce plan.
#include "nccl/plan.h"

#include <gtest/gtest.h>

namespace nccl = phantora::nccl;

TEST(NcclPlan, RingAllReduceHasTwoNMinusOneStepsOfOneNthOfTheBufferPerRank)
{
    for (uint32_t n : {2U, 3U, 4U, 8U})
    {
        nccl::Plan plan = nccl::MakeRingAllReducePlan(n, 1 << 20);
        ASSERT_EQ(plan.transfers.size(), 2 * (n - 1) * n) << "transfer count";
        for (uint32_t i = 0; i < plan.transfers.size(); ++i)
        {
            const auto& t = plan.transfers[i];
            ASSERT_EQ(t.dst, (t.src + 1) % n) << "ring successor";
            ASSERT_EQ(t.bytes, ((1U << 20) + n - 1) / n) << "chunk size";
            ASSERT_EQ(t.deps.size(), (i < n ? 0U : 1U)) << "one dependency after step 0";
        }
    }
    ASSERT_EQ(nccl::MakeRingAllReducePlan(1, 100).transfers.size(), 0U) << "single rank";
}
