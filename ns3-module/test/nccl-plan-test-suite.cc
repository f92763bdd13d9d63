#include "ns3/nccl-plan.h"
#include "ns3/test.h"

using namespace ns3;

class RingAllReducePlanTestCase : public TestCase
{
public:
    RingAllReducePlanTestCase()
        : TestCase("ring all-reduce plan has 2(n-1) steps of one n-th of the buffer per rank")
    {
    }

private:
    void DoRun() override
    {
        for (uint32_t n : {2U, 3U, 4U, 8U})
        {
            NcclPlan plan = MakeRingAllReducePlan(n, 1 << 20);
            NS_TEST_ASSERT_MSG_EQ(plan.transfers.size(), 2 * (n - 1) * n, "transfer count");
            for (uint32_t i = 0; i < plan.transfers.size(); ++i)
            {
                const auto& t = plan.transfers[i];
                NS_TEST_ASSERT_MSG_EQ(t.dst, (t.src + 1) % n, "ring successor");
                NS_TEST_ASSERT_MSG_EQ(t.bytes, ((1 << 20) + n - 1) / n, "chunk size");
                NS_TEST_ASSERT_MSG_EQ(t.deps.size(), (i < n ? 0U : 1U),
                                      "one dependency after step 0");
            }
        }
        NS_TEST_ASSERT_MSG_EQ(MakeRingAllReducePlan(1, 100).transfers.size(), 0U, "single rank");
    }
};

class NcclPlanTestSuite : public TestSuite
{
public:
    NcclPlanTestSuite() : TestSuite("phantora-nccl-plan", UNIT)
    {
        AddTestCase(new RingAllReducePlanTestCase, TestCase::QUICK);
    }
};

static NcclPlanTestSuite g_ncclPlanTestSuite;
