#include "gpu_model/interval_set.h"

#include <gtest/gtest.h>

using namespace phantora;

TEST(IntervalSet, UnionAndOverlapOfUnorderedIntervals)
{
    IntervalSet a;
    a.Add(50, 70);
    a.Add(0, 10);
    a.Add(5, 20);  // overlaps [0, 10)
    a.Add(30, 30); // empty
    EXPECT_EQ(a.TotalNs(), 20 + 20);
    IntervalSet b;
    b.Add(15, 60);
    EXPECT_EQ(a.OverlapNs(b), 5 + 10);
    EXPECT_EQ(b.OverlapNs(a), 15);
}

TEST(IntervalSet, ManyIntervalsAreMergedAsTheyCome)
{
    IntervalSet s;
    for (int64_t i = 0; i < 100000; ++i)
    {
        s.Add(i * 10, i * 10 + 15); // each overlaps the next
    }
    EXPECT_EQ(s.TotalNs(), 1000005);
    EXPECT_EQ(s.Merged().size(), 1U);
}
